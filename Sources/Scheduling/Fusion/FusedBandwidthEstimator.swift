/// The fusion scheduler's bandwidth view: a learned forecast (`LogLagModel`, gradient-boosted trees on the last ten
/// log rates) beside the Kalman, EWMA, last-sample and harmonic-mean members that the scheduler's controllers read.
///
/// The forecast is the model's: a median regression of the next log rate, it beats the last non-zero sample on the
/// held-out traces by the symmetric error |ln(predicted/actual)| (docs/SCHEDULING.md). Like every member it holds
/// its last non-zero estimate through an outage, forecasts 0.01 Mbit/s when a trace starts with one, and is never
/// zero, NaN or infinite once a measurement was seen. Its deviation is the Kalman filter's.
public struct FusedBandwidthEstimator: BandwidthEstimator {
    /// The Kalman filter (also the source of the stability signal and the deviation).
    public private(set) var kalman: KalmanEstimator
    /// The learned model.
    public let model: LogLagModel
    private var members: [any BandwidthEstimator]
    private var history = LogLagHistory()
    private var forecastMegabitsPerSecond = 0.0

    /// Creates the fusion with default members and the trained model.
    public init(kalman: KalmanEstimator = KalmanEstimator(), model: LogLagModel = .trained) {
        self.kalman = kalman
        self.model = model
        members = [EWMAEstimator(alpha: 0.5), LastSampleEstimator(), HarmonicMeanEstimator(window: 5)]
    }

    /// `fusion`.
    public var name: String { "fusion" }

    /// The current forecasts of the members: Kalman, EWMA, last sample, harmonic mean.
    public var memberPredictions: [BandwidthPrediction] { [kalman.predict()] + members.map { $0.predict() } }

    /// The model's forecast (0 before any measurement, the floor until a non-zero one).
    public func predict() -> BandwidthPrediction {
        let rate: Double
        if history.count == 0 {
            rate = 0
        } else if history.heldLags.isEmpty {
            rate = BandwidthPrediction.minimumBitsPerSecond
        } else {
            rate = forecastMegabitsPerSecond * 1e6
        }
        return BandwidthPrediction(
            bitsPerSecond: rate, standardDeviation: kalman.predict().standardDeviation, sampleCount: history.count)
    }

    /// Updates every member; a non-zero measurement refreshes the model's forecast, an outage holds it.
    public mutating func update(_ measurement: BandwidthMeasurement) {
        kalman.update(measurement)
        for i in members.indices { members[i].update(measurement) }
        if history.append(megabitsPerSecond: measurement.bitsPerSecond / 1e6) {
            forecastMegabitsPerSecond = model.predictMegabitsPerSecond(logLags: history.heldLags)
        }
    }

    /// Forwards the path change to the Kalman filter.
    public mutating func notePathChange() { kalman.notePathChange() }
}
