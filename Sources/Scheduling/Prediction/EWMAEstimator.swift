/// Exponentially weighted moving average of throughput with a matching deviation estimate.
///
/// Outages (zero measurements) are not averaged in: the estimate from before the outage is held until the link comes
/// back. Before any non-zero sample the forecast is `BandwidthPrediction.minimumBitsPerSecond`.
public struct EWMAEstimator: BandwidthEstimator {
    /// Weight of the newest sample, in (0, 1].
    public let alpha: Double
    private var mean: Double = 0
    private var meanSquare: Double = 0
    private var count = 0
    private var nonZeroCount = 0

    /// Creates the estimator; `alpha` is clamped to (0, 1].
    public init(alpha: Double = 0.3) { self.alpha = min(1, max(1e-6, alpha)) }

    /// `ewma`.
    public var name: String { "ewma" }

    /// The current average and its deviation.
    public func predict() -> BandwidthPrediction {
        guard nonZeroCount > 0 else {
            let rate = count == 0 ? 0 : BandwidthPrediction.minimumBitsPerSecond
            return BandwidthPrediction(bitsPerSecond: rate, standardDeviation: 0, sampleCount: count)
        }
        let variance = max(0, meanSquare - mean * mean)
        return BandwidthPrediction(
            bitsPerSecond: max(mean, BandwidthPrediction.minimumBitsPerSecond),
            standardDeviation: variance.squareRoot(), sampleCount: count)
    }

    /// Folds in one sample (the first non-zero sample seeds the average; outages are skipped).
    public mutating func update(_ measurement: BandwidthMeasurement) {
        count += 1
        let x = measurement.bitsPerSecond
        guard x > 0 else { return }
        if nonZeroCount == 0 {
            mean = x
            meanSquare = x * x
        } else {
            mean += alpha * (x - mean)
            meanSquare += alpha * (x * x - meanSquare)
        }
        nonZeroCount += 1
    }
}
