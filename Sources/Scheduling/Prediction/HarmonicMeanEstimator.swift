/// Harmonic mean of the last `window` samples: the throughput predictor of the MPC bitrate-adaptation paper
/// (Yin et al., SIGCOMM 2015). Zero samples (outages) make the harmonic mean 0, as in that predictor.
public struct HarmonicMeanEstimator: BandwidthEstimator {
    /// Number of recent samples averaged.
    public let window: Int
    private var recent: [Double] = []
    private var count = 0

    /// Creates the estimator over the last `window` samples (at least 1).
    public init(window: Int = 5) { self.window = max(1, window) }

    /// `hm5` for the default window.
    public var name: String { "hm\(window)" }

    /// The harmonic mean of the recent samples.
    public func predict() -> BandwidthPrediction {
        guard !recent.isEmpty else {
            return BandwidthPrediction(bitsPerSecond: 0, standardDeviation: 0, sampleCount: 0)
        }
        var reciprocalSum = 0.0
        for x in recent {
            guard x > 0 else { return BandwidthPrediction(bitsPerSecond: 0, standardDeviation: 0, sampleCount: count) }
            reciprocalSum += 1 / x
        }
        let mean = Double(recent.count) / reciprocalSum
        return BandwidthPrediction(bitsPerSecond: mean, standardDeviation: 0, sampleCount: count)
    }

    /// Appends the sample, dropping the oldest beyond the window.
    public mutating func update(_ measurement: BandwidthMeasurement) {
        recent.append(measurement.bitsPerSecond)
        if recent.count > window { recent.removeFirst(recent.count - window) }
        count += 1
    }
}
