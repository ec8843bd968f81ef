import Synchronization

/// A `BandwidthEstimator` behind a mutex: a thread-safe `BandwidthPredictor`.
public final class SharedBandwidthPredictor<Estimator: BandwidthEstimator>: BandwidthPredictor, PathChangeResponder {
    private let state: Mutex<Estimator>

    /// Wraps `estimator`.
    public init(_ estimator: Estimator) { state = Mutex(estimator) }

    /// The forecast for the next window.
    public func predict() -> BandwidthPrediction { state.withLock { $0.predict() } }

    /// Folds in one observation.
    public func update(measurement: BandwidthMeasurement) { state.withLock { $0.update(measurement) } }

    /// Forwards a path change to the estimator (the Kalman filter raises its process noise).
    public func pathDidChange() { state.withLock { $0.notePathChange() } }

    /// Reads the estimator's state under the lock.
    public func withEstimator<R>(_ body: (Estimator) -> R) -> R { state.withLock { body($0) } }
}

/// The Kalman predictor as a `BandwidthPredictor`.
public typealias KalmanBandwidthPredictor = SharedBandwidthPredictor<KalmanEstimator>
/// The EWMA predictor as a `BandwidthPredictor`.
public typealias EWMABandwidthPredictor = SharedBandwidthPredictor<EWMAEstimator>
/// The last-sample predictor as a `BandwidthPredictor`.
public typealias LastSampleBandwidthPredictor = SharedBandwidthPredictor<LastSampleEstimator>
/// The harmonic-mean-of-last-5 predictor as a `BandwidthPredictor`.
public typealias HarmonicMeanBandwidthPredictor = SharedBandwidthPredictor<HarmonicMeanEstimator>
