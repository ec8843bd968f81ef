import AetherIO
public import FoundationEssentials

/// A UUID version 7 (RFC 9562 section 5.7): a 48-bit big-endian Unix time in milliseconds, version 7,
/// 74 random bits and the RFC 4122 variant. Used as a challenge nonce: unique, and it carries its issue time.
public struct UUIDv7: Sendable, Hashable, CustomStringConvertible {
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// A fresh UUIDv7 for `date`, random bits from the system CSPRNG.
    public init(date: Date) {
        let milliseconds = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
        var bytes = SecureRandom.bytes(16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * UInt64(5 - index))) }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        self.bytes = bytes
    }

    /// Parses 16 bytes; anything that is not a version-7, RFC 4122-variant UUID throws `.malformedMessage`.
    public init(bytes: some Collection<UInt8>) throws(SecurityError) {
        let raw = Array(bytes)
        guard raw.count == 16, raw[6] >> 4 == 7, raw[8] >> 6 == 0b10 else {
            throw SecurityError(.malformedMessage, "not a UUIDv7")
        }
        self.bytes = raw
    }

    /// The embedded Unix time in milliseconds.
    public var milliseconds: UInt64 { bytes[0..<6].reduce(0) { $0 << 8 | UInt64($1) } }

    /// The embedded time.
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000) }

    /// The canonical 8-4-4-4-12 lowercase form.
    public var description: String {
        let hex = Array(Hex.encode(bytes))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }
}
