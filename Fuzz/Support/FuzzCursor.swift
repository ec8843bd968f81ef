// Shared by every fuzz target: reads a fuzz input as a small script (a selector byte, then fields),
// so one target can reach several parsers and drive a state machine with a sequence of operations.

/// A cursor over a fuzz input. Reads past the end return zeros / empty arrays instead of failing, so
/// every input is a valid script.
struct FuzzCursor {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether bytes remain.
    var isEmpty: Bool { offset >= bytes.count }

    /// The unread bytes, without consuming them.
    var rest: [UInt8] { offset < bytes.count ? Array(bytes[offset...]) : [] }

    /// The next byte, or 0 past the end.
    mutating func u8() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// The next two bytes, big-endian.
    mutating func u16() -> UInt16 { UInt16(u8()) << 8 | UInt16(u8()) }

    /// Up to `count` next bytes.
    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + max(count, 0))
        defer { offset = end }
        return offset < end ? Array(bytes[offset..<end]) : []
    }
}
