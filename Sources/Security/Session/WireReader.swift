/// A strict big-endian cursor over a byte array: every read is bounds-checked and a parse ends with
/// `finish()`, which rejects trailing bytes. Errors are `.malformedMessage` naming the structure.
struct WireReader {
    private let bytes: [UInt8]
    private var offset = 0
    private let structure: String

    init(_ bytes: [UInt8], structure: String) {
        self.bytes = bytes
        self.structure = structure
    }

    var remaining: Int { bytes.count - offset }

    func failure(_ what: String) -> SecurityError {
        SecurityError(.malformedMessage, "\(structure): \(what)")
    }

    mutating func u8(_ field: String) throws(SecurityError) -> UInt8 {
        guard remaining >= 1 else { throw failure("truncated at \(field)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16(_ field: String) throws(SecurityError) -> UInt16 {
        UInt16(truncatingIfNeeded: try integer(2, field))
    }

    mutating func u32(_ field: String) throws(SecurityError) -> UInt32 {
        UInt32(truncatingIfNeeded: try integer(4, field))
    }

    mutating func u64(_ field: String) throws(SecurityError) -> UInt64 { try integer(8, field) }

    mutating func take(_ count: Int, _ field: String) throws(SecurityError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else { throw failure("truncated at \(field)") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func keyID(_ field: String) throws(SecurityError) -> KeyID {
        try KeyID(bytes: take(KeyID.byteCount, field))
    }

    func finish() throws(SecurityError) {
        guard remaining == 0 else { throw failure("\(remaining) trailing byte(s)") }
    }

    private mutating func integer(_ width: Int, _ field: String) throws(SecurityError) -> UInt64 {
        guard remaining >= width else { throw failure("truncated at \(field)") }
        var value: UInt64 = 0
        for index in 0..<width { value = value << 8 | UInt64(bytes[offset + index]) }
        offset += width
        return value
    }
}

extension [UInt8] {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        for shift in stride(from: T.bitWidth - 8, through: 0, by: -8) {
            append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}
