/// A bandwidth predictor the fusion scheduler can use (Kalman today; an ML one can plug in later).
public protocol BandwidthPredictor: Sendable {
    /// The forecast for the next measurement window.
    func predict() async -> BandwidthPrediction
    /// Feeds one observation.
    func update(measurement: BandwidthMeasurement) async
}
