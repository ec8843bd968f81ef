/// A one-step-ahead throughput forecast.
public struct BandwidthPrediction: Sendable, Equatable {
    /// Predicted throughput in bits per second (never negative).
    public let bitsPerSecond: Double
    /// Standard deviation of the forecast in bits per second (0 when the predictor has no notion of it).
    public let standardDeviation: Double
    /// Measurements seen so far.
    public let sampleCount: Int

    /// The lowest forecast any predictor gives once it has seen a measurement: 0.01 Mbit/s (10 kbit/s).
    ///
    /// Predictors never forecast zero after an outage: they hold their last non-zero estimate, and when they have
    /// none yet (the trace starts with an outage) they forecast this floor. A zero forecast would stall a scheduler
    /// that sends nothing until the next measurement, which then never comes.
    public static let minimumBitsPerSecond = 10_000.0

    /// Creates a prediction; negative rates are clamped to 0.
    public init(bitsPerSecond: Double, standardDeviation: Double, sampleCount: Int) {
        self.bitsPerSecond = bitsPerSecond.isFinite ? max(0, bitsPerSecond) : 0
        self.standardDeviation = standardDeviation.isFinite ? max(0, standardDeviation) : 0
        self.sampleCount = sampleCount
    }

    /// A conservative rate: the forecast minus `sigmas` standard deviations, floored at `floorFraction` of it.
    public func lowerBound(sigmas: Double, floorFraction: Double = 0.25) -> Double {
        max(bitsPerSecond * floorFraction, bitsPerSecond - sigmas * standardDeviation)
    }
}
