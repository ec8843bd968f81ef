/// A wall-clock instant with millisecond resolution: when a device key was created.
///
/// Stored in the key store file, so it is wall time (milliseconds since the Unix epoch), not a
/// monotonic reading. Only its order matters to the key ring (newest first).
public struct KeyTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let millisecondsSinceEpoch: UInt64

    /// Wraps a count of milliseconds since the Unix epoch.
    public init(millisecondsSinceEpoch: UInt64) { self.millisecondsSinceEpoch = millisecondsSinceEpoch }

    public var description: String { "\(millisecondsSinceEpoch) ms" }

    public static func < (lhs: KeyTimestamp, rhs: KeyTimestamp) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }
}
