/// The fusion scheduler's bandwidth view: Kalman, EWMA, last sample and harmonic mean run side by side and are
/// fused by a weighted trimmed mean whose weights follow each one's recent relative error (inverse square), so
/// the fusion leans on whichever predictor has been right lately on this link.
public struct FusedBandwidthEstimator: BandwidthEstimator {
    /// The Kalman filter (also the source of the stability signal).
    public private(set) var kalman: KalmanEstimator
    private var members: [any BandwidthEstimator]
    private var errors: [Double]
    /// Fraction of the weight trimmed from each end.
    public let trim: Double
    /// Smoothing of the per-predictor error tracker.
    public let errorSmoothing: Double
    private var count = 0

    /// Creates the fusion with default members.
    public init(kalman: KalmanEstimator = KalmanEstimator(), trim: Double = 0.49, errorSmoothing: Double = 0.05) {
        self.kalman = kalman
        members = [EWMAEstimator(alpha: 0.5), LastSampleEstimator(), HarmonicMeanEstimator(window: 5)]
        errors = Array(repeating: 0.3, count: members.count + 1)
        self.trim = trim
        self.errorSmoothing = errorSmoothing
    }

    /// `fusion`.
    public var name: String { "fusion" }

    /// The current forecasts of the members, Kalman first.
    public var memberPredictions: [BandwidthPrediction] { [kalman.predict()] + members.map { $0.predict() } }

    /// The fused forecast; its deviation is the Kalman filter's.
    public func predict() -> BandwidthPrediction {
        let predictions = memberPredictions
        let candidates = zip(predictions, errors).map { prediction, error in
            (value: prediction.bitsPerSecond, weight: 1 / ((error + 0.05) * (error + 0.05)))
        }
        let fused = WeightedTrimmedMean.of(candidates, trim: trim) ?? 0
        return BandwidthPrediction(
            bitsPerSecond: fused, standardDeviation: predictions[0].standardDeviation, sampleCount: count)
    }

    /// Scores each member against the measurement, then updates all of them.
    public mutating func update(_ measurement: BandwidthMeasurement) {
        let truth = measurement.bitsPerSecond
        if count > 0 {
            let predictions = memberPredictions
            for i in predictions.indices {
                let reference = max(truth, predictions[i].bitsPerSecond, 1)
                let error = min(1, abs(predictions[i].bitsPerSecond - truth) / reference)
                errors[i] += errorSmoothing * (error - errors[i])
            }
        }
        kalman.update(measurement)
        for i in members.indices { members[i].update(measurement) }
        count += 1
    }

    /// Forwards the path change to the Kalman filter.
    public mutating func notePathChange() { kalman.notePathChange() }
}
