/// Aether's one source of time, injected into everything that reads a clock so that tests drive it with a
/// `ManualClock` instead of sleeps.
///
/// Both readings are in one unit, nanoseconds as `Int64`:
/// - the wall reading counts from 1970-01-01 00:00:00 UTC (`CLOCK_REALTIME`); it can jump when the system time is
///   set, so use it only for timestamps that leave the process (message times, key creation, certificate checks);
/// - the monotonic reading counts from an arbitrary fixed origin (`CLOCK_MONOTONIC`) and never decreases; use it
///   for every timeout, interval and rate.
///
/// The helpers below derive milliseconds and seconds from these two readings; they never read a clock of their own.
public protocol AetherClock: Sendable {
    /// Nanoseconds since the Unix epoch (wall-clock time; may jump).
    func wallNanoseconds() -> Int64
    /// Nanoseconds since a fixed origin (monotonic time; never decreases).
    func monotonicNanoseconds() -> Int64
}

extension AetherClock {
    /// The wall reading in whole milliseconds since the Unix epoch (rounded down).
    public func wallMilliseconds() -> Int64 { AetherTime.floorDivide(wallNanoseconds(), 1_000_000) }

    /// The wall reading in whole seconds since the Unix epoch (rounded down), as HTTP dates and signatures use.
    public func wallWholeSeconds() -> Int64 { AetherTime.floorDivide(wallNanoseconds(), 1_000_000_000) }

    /// The monotonic reading in whole milliseconds (rounded down).
    public func monotonicMilliseconds() -> Int64 { AetherTime.floorDivide(monotonicNanoseconds(), 1_000_000) }

    /// The wall reading in seconds since the Unix epoch.
    public func wallSeconds() -> Double { Double(wallNanoseconds()) / 1e9 }

    /// The monotonic reading in seconds.
    public func monotonicSeconds() -> Double { Double(monotonicNanoseconds()) / 1e9 }
}

/// Conversions between `Duration` and the clock's nanoseconds.
public enum AetherTime {
    /// Whole nanoseconds in `duration` (rounded toward zero, saturating at the ends of `Int64`).
    public static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !sumOverflow else { return seconds < 0 ? .min : .max }
        return sum
    }

    /// `value / divisor` rounded toward negative infinity (a reading before an origin stays before it).
    public static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
