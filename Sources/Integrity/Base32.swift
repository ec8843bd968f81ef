/// RFC 4648 base32, lowercase alphabet, no padding: the body of a multibase `b` string.
enum Base32 {
    private static let alphabet: [UInt8] = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// Encodes `bytes` (lowercase, unpadded).
    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes strictly: only lowercase alphabet characters, no padding, a length that some byte
    /// count encodes to, and zero leftover bits (so every byte string has exactly one encoding).
    static func decode(_ text: some StringProtocol) throws(IntegrityError) -> [UInt8] {
        let characters = Array(text.utf8)
        guard [0, 2, 4, 5, 7].contains(characters.count % 8) else {
            throw IntegrityError(.malformedIdentifier, "base32 text of length \(characters.count) is not canonical")
        }
        var out: [UInt8] = []
        out.reserveCapacity(characters.count * 5 / 8)
        var buffer: UInt32 = 0
        var bits = 0
        for (position, character) in characters.enumerated() {
            let value: UInt8
            switch character {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a")
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = character - UInt8(ascii: "2") + 26
            default:
                throw IntegrityError(.malformedIdentifier, "invalid base32 character at position \(position)")
            }
            buffer = (buffer << 5 | UInt32(value)) & 0xFFF
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else {
            throw IntegrityError(.malformedIdentifier, "base32 text has non-zero padding bits")
        }
        return out
    }
}
