/// Predicts that the next window repeats the last non-zero one (the naive baseline every predictor must beat).
///
/// An outage (a zero measurement) does not replace the estimate: the last non-zero sample is held until the link
/// comes back. Before any non-zero sample the forecast is `BandwidthPrediction.minimumBitsPerSecond`.
public struct LastSampleEstimator: BandwidthEstimator {
    private var last: Double = 0
    private var count = 0

    /// Creates the estimator.
    public init() {}

    /// `last`.
    public var name: String { "last" }

    /// The last non-zero sample (0 before any measurement, the floor after outages only).
    public func predict() -> BandwidthPrediction {
        let rate = count == 0 ? 0 : max(last, BandwidthPrediction.minimumBitsPerSecond)
        return BandwidthPrediction(bitsPerSecond: rate, standardDeviation: 0, sampleCount: count)
    }

    /// Remembers the sample unless it is an outage.
    public mutating func update(_ measurement: BandwidthMeasurement) {
        if measurement.bitsPerSecond > 0 { last = measurement.bitsPerSecond }
        count += 1
    }
}
