/// Hex encoding and strict decoding.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        unsafe String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for index in 0..<bytes.count {
                let byte = unsafe bytes[index]
                unsafe out[2 * index] = digits[Int(byte >> 4)]
                unsafe out[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    /// Lowercase hex of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let array = Array(bytes)
        return unsafe array.withUnsafeBytes { unsafe encode($0) }
    }

    /// Decodes hex (either case). An odd length or a non-hex character throws `.invalidHex`.
    public static func decode(_ text: some StringProtocol) throws(IOError) -> [UInt8] {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else {
            throw IOError(.invalidHex, "hex string has odd length \(utf8.count)")
        }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else {
                throw IOError(.invalidHex, "non-hex character at position \(index)")
            }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// Decodes strictly lowercase hex, as canonical encodings (ACI, manifests) require.
    public static func decodeLowercase(_ text: some StringProtocol) throws(IOError) -> [UInt8] {
        if text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }) {
            throw IOError(.invalidHex, "hex must be lowercase")
        }
        return try decode(text)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
