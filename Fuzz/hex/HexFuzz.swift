import AetherIO

/// AetherIO's hex parsers: `Hex.decode`, `Hex.decodeLowercase`, `Digest32(hex:)`, `Digest32(bytes:)`.
/// Properties: no crash; a decoded string re-encodes to its lowercase form; lowercase decoding accepts
/// exactly the decodable strings without A-F; a digest parses exactly from 64 hex digits or 32 bytes.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let raw = unsafe Array(bytes)
    let text = String(decoding: raw, as: UTF8.self)
    let decoded = try? Hex.decode(text)
    if let decoded {
        FuzzCheck.require(decoded.count * 2 == text.utf8.count, "decoded length does not match")
        FuzzCheck.require(Hex.encode(decoded) == text.lowercased(), "hex does not round-trip")
    }
    let hasUppercase = text.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }
    let lowercase = try? Hex.decodeLowercase(text)
    FuzzCheck.require(lowercase == (hasUppercase ? nil : decoded), "decodeLowercase disagrees with decode")

    let digest = try? Digest32(hex: text)
    FuzzCheck.require((digest != nil) == (decoded?.count == 32), "Digest32(hex:) accepts the wrong inputs")
    if let digest { FuzzCheck.require(digest.hex == text.lowercased(), "Digest32 hex does not round-trip") }

    let fromBytes = try? Digest32(bytes: raw)
    FuzzCheck.require((fromBytes != nil) == (raw.count == 32), "Digest32(bytes:) accepts the wrong lengths")
    if let fromBytes { FuzzCheck.require(fromBytes.bytes == raw, "Digest32 bytes do not round-trip") }
}
