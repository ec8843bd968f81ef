/// Predicts that the next window repeats the last one (the naive baseline every predictor must beat).
public struct LastSampleEstimator: BandwidthEstimator {
    private var last: Double = 0
    private var count = 0

    /// Creates the estimator.
    public init() {}

    /// `last`.
    public var name: String { "last" }

    /// The last sample.
    public func predict() -> BandwidthPrediction {
        BandwidthPrediction(bitsPerSecond: last, standardDeviation: 0, sampleCount: count)
    }

    /// Remembers the sample.
    public mutating func update(_ measurement: BandwidthMeasurement) {
        last = measurement.bitsPerSecond
        count += 1
    }
}
