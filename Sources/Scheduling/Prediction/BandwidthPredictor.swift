/// One throughput observation: how many bits moved in how long, and when it ended.
public struct BandwidthMeasurement: Sendable, Equatable {
    /// Observed throughput in bits per second (never negative).
    public let bitsPerSecond: Double
    /// Length of the observation window in seconds.
    public let duration: Double
    /// Monotonic time (seconds) at the end of the window.
    public let timestamp: Double

    /// A measurement from a throughput; negative or non-finite rates are recorded as 0 (an outage).
    public init(bitsPerSecond: Double, duration: Double, timestamp: Double) {
        self.bitsPerSecond = bitsPerSecond.isFinite ? max(0, bitsPerSecond) : 0
        self.duration = duration.isFinite ? max(0, duration) : 0
        self.timestamp = timestamp
    }

    /// A measurement from a transfer of `bytes` in `duration` seconds ending at `timestamp`.
    public init(bytes: Int, duration: Double, timestamp: Double) {
        let rate = duration > 0 ? Double(max(0, bytes)) * 8 / duration : 0
        self.init(bitsPerSecond: rate, duration: duration, timestamp: timestamp)
    }
}

/// A one-step-ahead throughput forecast.
public struct BandwidthPrediction: Sendable, Equatable {
    /// Predicted throughput in bits per second (never negative).
    public let bitsPerSecond: Double
    /// Standard deviation of the forecast in bits per second (0 when the predictor has no notion of it).
    public let standardDeviation: Double
    /// Measurements seen so far.
    public let sampleCount: Int

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

/// A bandwidth predictor the fusion scheduler can use (Kalman today; an ML one can plug in later).
public protocol BandwidthPredictor: Sendable {
    /// The forecast for the next measurement window.
    func predict() async -> BandwidthPrediction
    /// Feeds one observation.
    func update(measurement: BandwidthMeasurement) async
}

/// The synchronous core of a predictor: a plain value that folds measurements into a forecast.
///
/// The trace replays and the scheduler simulator drive these directly; `SharedBandwidthPredictor` puts one behind
/// a lock to make a `BandwidthPredictor`.
public protocol BandwidthEstimator: Sendable {
    /// Short name used in reports (`kalman`, `ewma`, ...).
    var name: String { get }
    /// The forecast for the next window.
    func predict() -> BandwidthPrediction
    /// Folds in one observation.
    mutating func update(_ measurement: BandwidthMeasurement)
    /// Called when the network path changed (interface or default route); the default does nothing.
    mutating func notePathChange()
}

extension BandwidthEstimator {
    /// Ignores path changes.
    public mutating func notePathChange() {}
}
