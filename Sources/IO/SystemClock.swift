/// The system's clocks: `clock_gettime(CLOCK_REALTIME)` for the wall reading and `clock_gettime(CLOCK_MONOTONIC)`
/// for the monotonic one, both in nanoseconds.
public struct SystemClock: AetherClock {
    /// Added to every wall reading; zero in production (a test gives a peer a skewed clock with it).
    public let wallSkew: Duration

    /// A handle on the system clocks, with an optional wall-clock skew.
    public init(wallSkew: Duration = .zero) { self.wallSkew = wallSkew }

    /// Nanoseconds since the Unix epoch, plus the skew.
    public func wallNanoseconds() -> Int64 {
        Syscall.clockNanoseconds(.realTime).addingReportingOverflow(AetherTime.nanoseconds(wallSkew)).partialValue
    }

    /// Nanoseconds since boot.
    public func monotonicNanoseconds() -> Int64 { Syscall.clockNanoseconds(.monotonic) }
}
