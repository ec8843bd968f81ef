#if canImport(Glibc)
    import Glibc
#endif

/// The last `LogLagModel.lagCount` measurements as natural logs of Mbit/s, newest first, frozen at the last non-zero
/// one: the input of `LogLagModel`.
///
/// Every measurement enters the history (an outage as the 0.01 Mbit/s floor, so a recent outage is visible to the
/// model), but the lags the model reads are those at the last non-zero measurement: during an outage the forecast
/// holds the last non-zero estimate. The trainer builds its rows with this same type, so training and prediction
/// see identical inputs.
public struct LogLagHistory: Sendable, Equatable {
    /// The newest `lagCount` log rates (newest first) as of the last non-zero measurement; empty until one arrives.
    public private(set) var heldLags: [Double] = []
    private var recent: [Double] = []
    /// Measurements seen (outages included).
    public private(set) var count = 0

    /// An empty history.
    public init() {}

    /// Natural log of a rate in Mbit/s, floored at 0.01 Mbit/s and capped at 1e9 Mbit/s; NaN reads as the floor.
    public static func logRate(megabitsPerSecond rate: Double) -> Double {
        guard rate > LogLagModel.floorMegabitsPerSecond else { return LogLagModel.floorLog }  // NaN compares false
        return log(min(rate, LogLagModel.ceilingMegabitsPerSecond))
    }

    /// Appends one measurement (Mbit/s); returns whether it changed the held lags (false for an outage).
    @discardableResult
    public mutating func append(megabitsPerSecond rate: Double) -> Bool {
        count += 1
        recent.insert(Self.logRate(megabitsPerSecond: rate), at: 0)
        if recent.count > LogLagModel.lagCount { recent.removeLast(recent.count - LogLagModel.lagCount) }
        guard rate > 0 else { return false }  // an outage (or NaN): hold
        heldLags = recent
        return true
    }
}
