import AetherIO

/// A strict cursor over a possession message: every read checks the bounds, and `finish()` refuses
/// trailing bytes.
struct PossessionWireReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func take(_ count: Int) throws(SecurityError) -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else {
            throw SecurityError(.malformedMessage, "a proof-of-possession message is truncated")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func integer(byteCount: Int) throws(SecurityError) -> UInt64 {
        try take(byteCount).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func digest() throws(SecurityError) -> Digest32 {
        let raw = try take(32)
        guard let digest = try? Digest32(bytes: raw) else {
            throw SecurityError(.malformedMessage, "a digest is 32 bytes")
        }
        return digest
    }

    func finish() throws(SecurityError) {
        guard offset == bytes.count else {
            throw SecurityError(.malformedMessage, "a proof-of-possession message has trailing bytes")
        }
    }

    /// Appends `value` as `byteCount` big-endian bytes.
    static func append(_ value: UInt64, byteCount: Int, to out: inout [UInt8]) {
        for index in stride(from: byteCount - 1, through: 0, by: -1) {
            out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))))
        }
    }
}
