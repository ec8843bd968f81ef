import AetherSecurity

/// `KeyID` and `HostID` parsing from bytes and from hex. Properties: no crash; bytes parse exactly
/// when there are 16; hex parses exactly from 32 lowercase hex digits and round-trips.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let raw = unsafe Array(bytes)
    let text = String(decoding: raw, as: UTF8.self)
    let lowercaseHex = text.utf8.allSatisfy {
        ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f"))
    }
    let shouldParseHex = text.utf8.count == 32 && lowercaseHex

    let keyID = try? KeyID(bytes: raw)
    FuzzCheck.require((keyID != nil) == (raw.count == 16), "KeyID(bytes:) accepts the wrong lengths")
    if let keyID { FuzzCheck.require(keyID.bytes == raw, "KeyID bytes do not round-trip") }
    let keyIDHex = try? KeyID(hex: text)
    FuzzCheck.require((keyIDHex != nil) == shouldParseHex, "KeyID(hex:) accepts the wrong strings")
    if let keyIDHex { FuzzCheck.require(keyIDHex.hex == text, "KeyID hex does not round-trip") }

    let hostID = try? HostID(bytes: raw)
    FuzzCheck.require((hostID != nil) == (raw.count == 16), "HostID(bytes:) accepts the wrong lengths")
    let hostIDHex = try? HostID(hex: text)
    FuzzCheck.require((hostIDHex != nil) == shouldParseHex, "HostID(hex:) accepts the wrong strings")
    if let hostIDHex { FuzzCheck.require(hostIDHex.hex == text, "HostID hex does not round-trip") }
}
