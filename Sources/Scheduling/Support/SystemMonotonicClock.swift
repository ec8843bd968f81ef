/// The system's monotonic clock (`CLOCK_MONOTONIC`).
public struct SystemMonotonicClock: MonotonicClock {
    /// Creates the clock.
    public init() {}
    /// Seconds since boot.
    public func now() -> Double { SystemCalls.monotonicSeconds() }
}
