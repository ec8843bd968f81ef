/// Harmonic mean of the last `window` non-zero samples: the throughput predictor of the MPC bitrate-adaptation paper
/// (Yin et al., SIGCOMM 2015).
///
/// In that paper an outage in the window makes the harmonic mean 0; here outages are skipped, so the forecast holds
/// the estimate from before the outage and never drops to zero. Before any non-zero sample the forecast is
/// `BandwidthPrediction.minimumBitsPerSecond`.
public struct HarmonicMeanEstimator: BandwidthEstimator {
    /// Number of recent non-zero samples averaged.
    public let window: Int
    private var recent: [Double] = []
    private var count = 0

    /// Creates the estimator over the last `window` samples (at least 1).
    public init(window: Int = 5) { self.window = max(1, window) }

    /// `hm5` for the default window.
    public var name: String { "hm\(window)" }

    /// The harmonic mean of the recent non-zero samples.
    public func predict() -> BandwidthPrediction {
        guard !recent.isEmpty else {
            let rate = count == 0 ? 0 : BandwidthPrediction.minimumBitsPerSecond
            return BandwidthPrediction(bitsPerSecond: rate, standardDeviation: 0, sampleCount: count)
        }
        let reciprocalSum = recent.reduce(0) { $0 + 1 / $1 }
        let mean = Double(recent.count) / reciprocalSum
        return BandwidthPrediction(
            bitsPerSecond: max(mean, BandwidthPrediction.minimumBitsPerSecond), standardDeviation: 0,
            sampleCount: count)
    }

    /// Appends a non-zero sample, dropping the oldest beyond the window; an outage only counts.
    public mutating func update(_ measurement: BandwidthMeasurement) {
        count += 1
        guard measurement.bitsPerSecond > 0 else { return }
        recent.append(measurement.bitsPerSecond)
        if recent.count > window { recent.removeFirst(recent.count - window) }
    }
}
