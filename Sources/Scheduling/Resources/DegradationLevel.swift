/// Six degradation levels, from full speed to paused, with what each allows.
public enum DegradationLevel: Int, Sendable, CaseIterable, Comparable {
    /// No limits.
    case normal = 0
    /// Slightly warm or low: no prefetch.
    case light = 1
    /// At most 4 parallel uploads, 8 MiB chunks.
    case moderate = 2
    /// At most 2 parallel uploads, 4 MiB chunks, no erasure coding.
    case heavy = 3
    /// One upload at a time, 1 MiB chunks.
    case severe = 4
    /// Uploads paused until the device recovers.
    case paused = 5

    /// Orders by severity.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The most parallel uploads allowed (nil: the tier decides).
    public var parallelismCap: Int? { [nil, nil, 4, 2, 1, 0][rawValue] }
    /// The largest chunk allowed.
    public var chunkSizeCap: Int {
        [16, 16, 8, 4, 1, 1][rawValue] * 1024 * 1024
    }
    /// Whether ULTRAFAST prefetch may run.
    public var allowsPrefetch: Bool { self == .normal }
    /// Whether parity chunks may be computed.
    public var allowsErasureCoding: Bool { self < .heavy }
}
