/// Exponentially weighted moving average of throughput with a matching deviation estimate.
public struct EWMAEstimator: BandwidthEstimator {
    /// Weight of the newest sample, in (0, 1].
    public let alpha: Double
    private var mean: Double = 0
    private var meanSquare: Double = 0
    private var count = 0

    /// Creates the estimator; `alpha` is clamped to (0, 1].
    public init(alpha: Double = 0.3) { self.alpha = min(1, max(1e-6, alpha)) }

    /// `ewma`.
    public var name: String { "ewma" }

    /// The current average and its deviation.
    public func predict() -> BandwidthPrediction {
        let variance = max(0, meanSquare - mean * mean)
        return BandwidthPrediction(bitsPerSecond: mean, standardDeviation: variance.squareRoot(), sampleCount: count)
    }

    /// Folds in one sample (the first sample seeds the average).
    public mutating func update(_ measurement: BandwidthMeasurement) {
        let x = measurement.bitsPerSecond
        if count == 0 {
            mean = x
            meanSquare = x * x
        } else {
            mean += alpha * (x - mean)
            meanSquare += alpha * (x * x - meanSquare)
        }
        count += 1
    }
}
