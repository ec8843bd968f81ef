#if canImport(Glibc)
    import Glibc
#endif

/// The errors of one predictor's one-step-ahead forecasts over a set of samples (Mbit/s).
///
/// - MAPE: mean |pred − actual| / actual over samples with a non-zero actual.
/// - Volume error: Σ|pred − actual| / Σactual over all samples.
/// - Log error (`logError`, the figure that decides): mean |ln(pred/actual)| with both floored at 0.01 Mbit/s, over
///   samples with a non-zero actual. An actual zero is an outage, which every predictor holds through by design
///   (it forecasts the level from before the outage), so it is not scored, as in MAPE; their number is
///   `outageCount`, and `logErrorWithOutages` scores them too, as 0.01 Mbit/s.
public struct ForecastScore: Sendable, Equatable {
    /// Samples scored.
    public private(set) var count = 0
    /// Samples whose actual was zero.
    public private(set) var outageCount = 0
    private var absolutePercentSum = 0.0
    private var absoluteErrorSum = 0.0
    private var actualSum = 0.0
    private var logErrorSum = 0.0
    private var outageLogErrorSum = 0.0

    /// The floor of predictions and actuals in the log error, Mbit/s.
    public static let logFloorMegabitsPerSecond = 0.01

    /// An empty score.
    public init() {}

    /// Adds one forecast; negative or NaN values count as 0 (the floor in the log error).
    public mutating func add(predicted: Double, actual: Double) {
        let prediction = predicted > 0 ? predicted : 0
        let truth = actual > 0 ? actual : 0
        let error = abs(prediction - truth)
        count += 1
        absoluteErrorSum += error
        actualSum += truth
        let logError = abs(Self.floorLog(prediction) - Self.floorLog(truth))
        if truth > 0 {
            absolutePercentSum += error / truth
            logErrorSum += logError
        } else {
            outageCount += 1
            outageLogErrorSum += logError
        }
    }

    /// Adds the samples of another score.
    public mutating func merge(_ other: ForecastScore) {
        count += other.count
        outageCount += other.outageCount
        absolutePercentSum += other.absolutePercentSum
        absoluteErrorSum += other.absoluteErrorSum
        actualSum += other.actualSum
        logErrorSum += other.logErrorSum
        outageLogErrorSum += other.outageLogErrorSum
    }

    /// Mean absolute percentage error over non-zero actuals (0 when there are none).
    public var mape: Double { count > outageCount ? absolutePercentSum / Double(count - outageCount) : 0 }
    /// Σ|pred − actual| / Σactual (0 when the actuals sum to 0).
    public var volumeError: Double { actualSum > 0 ? absoluteErrorSum / actualSum : 0 }
    /// Mean |ln(pred/actual)|, both floored at 0.01 Mbit/s, over non-zero actuals (0 when there are none).
    public var logError: Double { count > outageCount ? logErrorSum / Double(count - outageCount) : 0 }
    /// The log error over every sample, outages scored as an actual of 0.01 Mbit/s.
    public var logErrorWithOutages: Double { count > 0 ? (logErrorSum + outageLogErrorSum) / Double(count) : 0 }

    private static func floorLog(_ value: Double) -> Double {
        log(min(max(value, logFloorMegabitsPerSecond), Double.greatestFiniteMagnitude))
    }
}
