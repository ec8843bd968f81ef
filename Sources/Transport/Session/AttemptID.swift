/// The 8-byte attempt id of a handshake: random, non-zero, fresh for every attempt; message 2 copies it.
///
/// It routes an answer to its attempt and names the attempt (and the session it may become) between a
/// state machine and its driver. It is not authenticated by itself (the prologue authenticates it).
package struct AttemptID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The id as on the wire (big-endian there).
    package let rawValue: UInt64

    /// Wraps a non-zero value; nil for zero.
    package init?(rawValue: UInt64) {
        guard rawValue != 0 else { return nil }
        self.rawValue = rawValue
    }

    /// The id in hex.
    package var description: String { String(rawValue, radix: 16) }

    /// Orders ids by value.
    package static func < (lhs: AttemptID, rhs: AttemptID) -> Bool { lhs.rawValue < rhs.rawValue }
}
