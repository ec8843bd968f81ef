#if canImport(Glibc)
    import Glibc
#endif

/// Kalman filter over throughput with state x = [b, ḃ, b̈] (bandwidth in bit/s, its first and second derivative).
///
/// Model, for a step of dt seconds between measurements:
/// - F (transition): constant acceleration, `[[1, dt, dt²/2], [0, 1, dt], [0, 0, 1]]`.
/// - H (observation): `[1, 0, 0]` — a measurement sees the bandwidth only.
/// - Q (process noise): a random walk on the level, `(q_b·s)²·dt` on b, plus white jerk of intensity `(q_j·s)²`
///   (`dt⁵/20, dt⁴/8, dt³/6; dt³/3, dt²/2; dt` in the usual arrangement). `s` is the throughput scale (the larger of
///   the estimate and a slow average), so the filter behaves alike at 1 Mbit/s and 1 Gbit/s. Raised ×10 for five
///   steps after a network path change.
/// - R (measurement noise): adaptive, `(ν·s)²` where ν² is a running mean of the squared relative innovation, minus
///   what the prior covariance already explains, floored at `(r_min·s)²`.
///
/// Anomalies: an innovation whose Mahalanobis distance exceeds 2.5 has its R inflated by (d/2.5)² (a drop by
/// (d/2.5)^`dropAnomalyExponent`, so falling links are followed sooner), so its weight falls but it is never
/// discarded; two in a row on the same side are a level shift and are taken at full weight, and a rise from far
/// below the long-run mean (`recoveryFraction`) is recovery from an outage, not a spike.
/// When the covariance's condition number (in Mbit/s units) exceeds 1e6 the filter drops the second derivative and
/// runs the 2-state [b, ḃ] model for a while. Forecasts damp the trend (`trendDamping`): throughput traces are
/// mean-reverting at one-step horizons, and an undamped slope overshoots at every turn.
///
/// Outages (zero measurements) are held over, not filtered: the state keeps the estimate from before the outage, and
/// the next non-zero measurement arrives after a longer step, so the grown covariance lets it move the estimate
/// quickly. Forecasts never fall below `BandwidthPrediction.minimumBitsPerSecond` once a measurement was seen.
public struct KalmanEstimator: BandwidthEstimator {
    /// Tunable noise and damping parameters.
    public struct Parameters: Sendable, Equatable {
        /// Relative level random-walk intensity q_b (per √s).
        public var levelNoise: Double
        /// Relative jerk intensity q_j.
        public var jerkNoise: Double
        /// Floor of the relative measurement noise r_min.
        public var minimumMeasurementNoise: Double
        /// Initial relative measurement noise.
        public var initialMeasurementNoise: Double
        /// Weight of the slope terms in a forecast, in [0, 1].
        public var trendDamping: Double
        /// Mahalanobis distance above which a measurement is down-weighted.
        public var anomalyThreshold: Double
        /// Condition number above which the filter falls back to two states.
        public var conditionLimit: Double
        /// Coefficient of variation below which a sample counts as low-variance.
        public var lowVarianceThreshold: Double
        /// Exponent of the R inflation for downward anomalies (2 = as for spikes; smaller follows drops faster).
        public var dropAnomalyExponent: Double = 1
        /// An estimate below this fraction of the long-run mean marks an outage; rises from it are not anomalies.
        public var recoveryFraction: Double = 0.5

        /// The defaults used by the scheduler (tuned on the tuning half of the traces; see docs/SCHEDULING.md).
        public static let `default` = Parameters(
            levelNoise: 1.0, jerkNoise: 0.02, minimumMeasurementNoise: 0.02, initialMeasurementNoise: 0.2,
            trendDamping: 0.2, anomalyThreshold: 2.5, conditionLimit: 1e6,
            lowVarianceThreshold: UploadConstants.transportStabilityThreshold)

        /// Creates a parameter set.
        public init(
            levelNoise: Double, jerkNoise: Double, minimumMeasurementNoise: Double, initialMeasurementNoise: Double,
            trendDamping: Double, anomalyThreshold: Double, conditionLimit: Double, lowVarianceThreshold: Double
        ) {
            self.levelNoise = levelNoise
            self.jerkNoise = jerkNoise
            self.minimumMeasurementNoise = minimumMeasurementNoise
            self.initialMeasurementNoise = initialMeasurementNoise
            self.trendDamping = trendDamping
            self.anomalyThreshold = anomalyThreshold
            self.conditionLimit = conditionLimit
            self.lowVarianceThreshold = lowVarianceThreshold
        }
    }

    /// The parameters in use.
    public let parameters: Parameters
    /// State estimate [b, ḃ, b̈] in bit/s, bit/s², bit/s³.
    public private(set) var state: [Double] = [0, 0, 0]
    /// State covariance, row-major 3×3.
    public private(set) var covariance: [Double] = Array(repeating: 0, count: 9)
    /// Whether the filter runs the 2-state fallback (second derivative dropped).
    public private(set) var usesReducedModel = false
    /// Running coefficient of variation of the innovations (the spec's `varianceEstimate`).
    public private(set) var varianceEstimate: Double = 1
    /// Consecutive updates with `varianceEstimate` below the low-variance threshold.
    public private(set) var consecutiveLowVarianceSamples = 0
    /// Measurements whose weight was lowered as anomalies.
    public private(set) var downWeightedCount = 0
    /// Times the filter fell back to two states.
    public private(set) var fallbackCount = 0
    /// Non-zero measurements folded in.
    public private(set) var sampleCount = 0
    /// Zero measurements (outages) held over without changing the state.
    public private(set) var outageCount = 0

    private var lastTimestamp: Double = 0
    private var typicalInterval: Double = 1
    private var slowMean: Double = 0
    private var relativeNoise: Double
    private var measurementNoise: Double = 0
    private var lastOutlierSign: Double = 0
    private var boostedSteps = 0
    private var reducedSteps = 0

    /// Creates an empty filter.
    public init(parameters: Parameters = .default) {
        self.parameters = parameters
        relativeNoise = parameters.initialMeasurementNoise * parameters.initialMeasurementNoise
    }

    /// `kalman`.
    public var name: String { "kalman" }

    /// The forecast one typical interval ahead.
    public func predict() -> BandwidthPrediction { predict(horizon: typicalInterval) }

    /// The forecast `horizon` seconds after the last measurement.
    public func predict(horizon: Double) -> BandwidthPrediction {
        guard sampleCount > 0 else {
            // Nothing but outages so far: the floor, never zero.
            let rate = outageCount > 0 ? BandwidthPrediction.minimumBitsPerSecond : 0
            return BandwidthPrediction(bitsPerSecond: rate, standardDeviation: 0, sampleCount: 0)
        }
        let h = max(0, horizon)
        let slope = state[1] * h + (usesReducedModel ? 0 : state[2] * h * h / 2)
        let mean = max(state[0] + parameters.trendDamping * slope, BandwidthPrediction.minimumBitsPerSecond)
        // The forecast's deviation is the empirical one (running relative innovation × scale, grown with √h):
        // with a high level noise the model's own P overstates what the one-step errors actually are.
        let deviation = relativeNoise.squareRoot() * scale * max(1, h / max(typicalInterval, 1e-3)).squareRoot()
        return BandwidthPrediction(bitsPerSecond: mean, standardDeviation: deviation, sampleCount: sampleCount)
    }

    /// Folds in one measurement: predict to its timestamp, then correct. An outage (zero) is held over.
    public mutating func update(_ measurement: BandwidthMeasurement) {
        let z = measurement.bitsPerSecond
        guard z > 0 else {
            outageCount += 1
            return
        }
        guard sampleCount > 0 else {
            start(z, at: measurement.timestamp)
            return
        }
        var dt = measurement.timestamp - lastTimestamp
        if !(dt > 0) { dt = max(measurement.duration, 1e-3) }
        dt = min(dt, 30)
        typicalInterval += 0.2 * (dt - typicalInterval)
        lastTimestamp = measurement.timestamp

        // Predict.
        let f = transition(dt)
        state = multiply(f, state3: state)
        if usesReducedModel { state[2] = 0 }
        let scale = self.scale
        let boost = boostedSteps > 0 ? 10.0 : 1.0
        if boostedSteps > 0 { boostedSteps -= 1 }
        let q = processNoise(dt, scale: scale)
        covariance = add(multiply(multiply(f, covariance), transpose(f)), q.map { $0 * boost })
        if usesReducedModel { zeroThirdState() }

        // Correct, down-weighting anomalies.
        let innovation = z - state[0]
        let priorVariance = covariance[0]
        var r = measurementNoise
        let distance = abs(innovation) / max(priorVariance + r, 1e-300).squareRoot()
        let sign: Double = innovation >= 0 ? 1 : -1
        // Coming back from an outage (estimate far below the long-run level) is recovery, not a spike.
        let recovering = sign > 0 && state[0] < parameters.recoveryFraction * slowMean
        if distance > parameters.anomalyThreshold && !recovering {
            if lastOutlierSign == sign {
                // A second outlier on the same side: the level moved; accept it and widen the level's variance.
                covariance[0] += innovation * innovation / 4
                lastOutlierSign = 0
            } else {
                let ratio = distance / parameters.anomalyThreshold
                // Drops are down-weighted less than spikes: overestimating a falling link costs stalls.
                r *= sign > 0 ? ratio * ratio : pow(ratio, parameters.dropAnomalyExponent)
                downWeightedCount += 1
                lastOutlierSign = sign
            }
        } else {
            lastOutlierSign = 0
        }
        let s = covariance[0] + r
        let gain = [covariance[0] / s, covariance[3] / s, covariance[6] / s]
        for i in 0..<3 { state[i] += gain[i] * innovation }
        // Joseph form: (I − KH) P (I − KH)ᵀ + K r Kᵀ keeps P symmetric and positive.
        var ikh = identity
        for i in 0..<3 { ikh[i * 3] -= gain[i] }
        covariance = multiply(multiply(ikh, covariance), transpose(ikh))
        for i in 0..<3 { for j in 0..<3 { covariance[i * 3 + j] += gain[i] * r * gain[j] } }
        if state[0] < 0 {
            state[0] = 0
            state[1] = max(0, state[1])
        }

        // Adapt R and the stability statistics.
        let relative = innovation / scale
        relativeNoise += 0.1 * (relative * relative - relativeNoise)
        let floor = parameters.minimumMeasurementNoise * scale
        measurementNoise = max(floor * floor, relativeNoise * scale * scale - priorVariance)
        let reference = max(z, state[0], 1)
        let cv = abs(innovation) / reference
        varianceEstimate = (varianceEstimate * varianceEstimate * 0.7 + 0.3 * cv * cv).squareRoot()
        consecutiveLowVarianceSamples =
            varianceEstimate < parameters.lowVarianceThreshold
            ? consecutiveLowVarianceSamples + 1 : 0
        slowMean += 0.05 * (z - slowMean)
        sampleCount += 1
        checkConditioning(scale: scale)
    }

    /// Raises the process noise ×10 for the next five steps and widens the level's variance: after a path change
    /// the old estimate says little.
    public mutating func notePathChange() {
        guard sampleCount > 0 else { return }
        boostedSteps = 5
        covariance[0] += (0.5 * scale) * (0.5 * scale)
        consecutiveLowVarianceSamples = 0
    }

    /// Condition number of the covariance in Mbit/s units (∞ when it is singular).
    public var conditionNumber: Double {
        let units = [1e-6, 1e-6, 1e-6]
        var scaled = covariance
        for i in 0..<3 { for j in 0..<3 { scaled[i * 3 + j] *= units[i] * units[j] } }
        let eigen =
            usesReducedModel
            ? KalmanEstimator.eigenvalues2(scaled[0], scaled[1], scaled[4])
            : KalmanEstimator.eigenvalues3(scaled)
        guard let low = eigen.min(), let high = eigen.max(), low > 0 else { return .infinity }
        return high / low
    }

    // MARK: - Internals

    private var scale: Double { max(state[0], slowMean, 1_000) }

    private mutating func start(_ z: Double, at time: Double) {
        state = [z, 0, 0]
        let s = max(z, 1_000)
        let r = parameters.initialMeasurementNoise * s
        covariance = [r * r, 0, 0, 0, (0.1 * s) * (0.1 * s), 0, 0, 0, (0.01 * s) * (0.01 * s)]
        measurementNoise = r * r
        slowMean = z
        lastTimestamp = time
        sampleCount = 1
    }

    private mutating func checkConditioning(scale: Double) {
        if usesReducedModel {
            reducedSteps += 1
            if reducedSteps >= 30 {
                // Try the full model again with a fresh second-derivative variance.
                usesReducedModel = false
                reducedSteps = 0
                covariance[8] = (0.01 * scale) * (0.01 * scale)
            }
        }
        if conditionNumber > parameters.conditionLimit {
            if usesReducedModel {
                // Even the 2-state model is ill-conditioned: reset the slope's variance.
                covariance[1] = 0
                covariance[3] = 0
                covariance[4] = (0.1 * scale) * (0.1 * scale)
            } else {
                usesReducedModel = true
                reducedSteps = 0
                fallbackCount += 1
                state[2] = 0
                zeroThirdState()
            }
        }
    }

    private mutating func zeroThirdState() {
        for i in 0..<3 {
            covariance[i * 3 + 2] = 0
            covariance[6 + i] = 0
        }
    }

    private func transition(_ dt: Double) -> [Double] {
        [1, dt, dt * dt / 2, 0, 1, dt, 0, 0, 1]
    }

    private func processNoise(_ dt: Double, scale: Double) -> [Double] {
        let level = parameters.levelNoise * scale
        let jerk = parameters.jerkNoise * scale
        let j = jerk * jerk
        let dt2 = dt * dt
        let dt3 = dt2 * dt
        var q = [
            j * dt3 * dt2 / 20, j * dt2 * dt2 / 8, j * dt3 / 6,
            j * dt2 * dt2 / 8, j * dt3 / 3, j * dt2 / 2,
            j * dt3 / 6, j * dt2 / 2, j * dt,
        ]
        q[0] += level * level * dt
        return q
    }

    private var identity: [Double] { [1, 0, 0, 0, 1, 0, 0, 0, 1] }

    private func multiply(_ a: [Double], _ b: [Double]) -> [Double] {
        var c = Array(repeating: 0.0, count: 9)
        for i in 0..<3 { for j in 0..<3 { for k in 0..<3 { c[i * 3 + j] += a[i * 3 + k] * b[k * 3 + j] } } }
        return c
    }

    private func multiply(_ a: [Double], state3 x: [Double]) -> [Double] {
        (0..<3).map { i in a[i * 3] * x[0] + a[i * 3 + 1] * x[1] + a[i * 3 + 2] * x[2] }
    }

    private func transpose(_ a: [Double]) -> [Double] {
        [a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]]
    }

    private func add(_ a: [Double], _ b: [Double]) -> [Double] { zip(a, b).map { $0 + $1 } }

    /// Eigenvalues of the symmetric 2×2 matrix [[a, b], [b, d]].
    static func eigenvalues2(_ a: Double, _ b: Double, _ d: Double) -> [Double] {
        let mean = (a + d) / 2
        let radius = (((a - d) / 2) * ((a - d) / 2) + b * b).squareRoot()
        return [mean - radius, mean + radius]
    }

    /// Eigenvalues of a symmetric 3×3 matrix (row-major), by the trigonometric closed form.
    static func eigenvalues3(_ m: [Double]) -> [Double] {
        let p1 = m[1] * m[1] + m[2] * m[2] + m[5] * m[5]
        let trace = m[0] + m[4] + m[8]
        guard p1 > 0 else { return [m[0], m[4], m[8]] }
        let q = trace / 3
        let p2 = (m[0] - q) * (m[0] - q) + (m[4] - q) * (m[4] - q) + (m[8] - q) * (m[8] - q) + 2 * p1
        let p = (p2 / 6).squareRoot()
        guard p > 0 else { return [q, q, q] }
        var b = m
        for i in 0..<3 { b[i * 4] -= q }
        b = b.map { $0 / p }
        let det =
            b[0] * (b[4] * b[8] - b[5] * b[7]) - b[1] * (b[3] * b[8] - b[5] * b[6])
            + b[2] * (b[3] * b[7] - b[4] * b[6])
        let r = min(1, max(-1, det / 2))
        let phi = acos(r) / 3
        let high = q + 2 * p * cos(phi)
        let low = q + 2 * p * cos(phi + 2 * Double.pi / 3)
        return [low, 3 * q - high - low, high]
    }
}
