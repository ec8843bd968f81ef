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
