import AetherScheduling

/// `aether-bench predict [--traces DIR]` (the project's `Traces/` by default): replays every trace and scores one-step-ahead forecasts.
///
/// For each sample the predictors forecast first, then see the sample. Two errors per predictor: MAPE over
/// samples with a non-zero truth (outages would divide by zero), and the volume-weighted error Σ|err| / Σtruth over
/// all samples (outages count, and a trace's high-rate stretches weigh as much as the bytes they carry). Traces
/// are split per family by name order: even positions tune, odd positions are held out; `holdout_*` columns
/// score only the held-out traces.
enum PredictBench: BenchSuite {
    static let name = "predict"
    static let runsByDefault = false
    static let summary = "one-step-ahead bandwidth forecasts over the throughput traces"

    /// Accumulated errors of one predictor over a set of samples.
    struct Score {
        var absolutePercentSum = 0.0
        var percentCount = 0
        var absoluteErrorSum = 0.0
        var truthSum = 0.0

        mutating func add(prediction: Double, truth: Double) {
            let error = abs(prediction - truth)
            if truth > 0 {
                absolutePercentSum += error / truth
                percentCount += 1
            }
            absoluteErrorSum += error
            truthSum += truth
        }

        mutating func merge(_ other: Score) {
            absolutePercentSum += other.absolutePercentSum
            percentCount += other.percentCount
            absoluteErrorSum += other.absoluteErrorSum
            truthSum += other.truthSum
        }

        var mape: Double { percentCount > 0 ? absolutePercentSum / Double(percentCount) : 0 }
        var volumeError: Double { truthSum > 0 ? absoluteErrorSum / truthSum : 0 }
    }

    static let predictorNames = ["kalman", "ewma", "last", "hm5", "fusion"]

    static func makePredictors() -> [any BandwidthPredictor] {
        [
            KalmanBandwidthPredictor(KalmanEstimator()), EWMABandwidthPredictor(EWMAEstimator()),
            LastSampleBandwidthPredictor(LastSampleEstimator()),
            HarmonicMeanBandwidthPredictor(HarmonicMeanEstimator()),
            SharedBandwidthPredictor(FusedBandwidthEstimator()),
        ]
    }

    /// Scores of every predictor on one trace, in `predictorNames` order.
    static func replay(_ trace: ThroughputTrace) async -> [Score] {
        let predictors = makePredictors()
        var scores = Array(repeating: Score(), count: predictors.count)
        for (index, sample) in trace.samples.enumerated() {
            let truth = sample.megabitsPerSecond
            for (i, predictor) in predictors.enumerated() {
                if index > 0 {
                    let forecast = await predictor.predict().bitsPerSecond / 1e6
                    scores[i].add(prediction: forecast, truth: truth)
                }
                await predictor.update(measurement: sample.measurement)
            }
        }
        return scores
    }

    static func run(options: [String]) async throws {
        let directory = BenchOptions.traces(in: options)
        let traces = try TraceLoader.loadAll(directory: directory)
        print("predict: \(traces.count) traces from \(Set(traces.map(\.family)).count) families (one-step-ahead)")
        var families: [String] = []
        for trace in traces where !families.contains(trace.family) { families.append(trace.family) }
        let empty = Array(repeating: Score(), count: predictorNames.count)
        var overall = (all: empty, tune: empty, holdout: empty)
        var verdicts: [String] = []
        for family in families {
            let members = traces.filter { $0.family == family }.sorted { $0.name < $1.name }
            var all = empty
            var holdout = empty
            for (position, trace) in members.enumerated() {
                let scores = await replay(trace)
                for i in scores.indices {
                    all[i].merge(scores[i])
                    overall.all[i].merge(scores[i])
                    if position % 2 == 1 {
                        holdout[i].merge(scores[i])
                        overall.holdout[i].merge(scores[i])
                    } else {
                        overall.tune[i].merge(scores[i])
                    }
                }
            }
            let samples = members.reduce(0) { $0 + $1.samples.count }
            print("family \(family)  traces=\(members.count) samples=\(samples) held_out=\(members.count / 2)")
            for (i, name) in predictorNames.enumerated() {
                printLine(family, name, all[i], holdout: members.count > 1 ? holdout[i] : nil)
            }
            if family == "nr5g_throughput_prediction" { try printReferences(directory + "/" + family, members) }
            verdicts.append(
                verdict(family, members.count > 1 ? holdout : all, set: members.count > 1 ? "holdout" : "all"))
        }
        for (i, name) in predictorNames.enumerated() {
            printLine("overall", name, overall.all[i], holdout: overall.holdout[i])
        }
        for (i, name) in predictorNames.enumerated() {
            let score = overall.tune[i]
            print(
                "overall_tune  \(Measure.pad(name, 8)) mape=\(f(score.mape))  vol_err=\(f(score.volumeError))")
        }
        verdicts.append(verdict("overall", overall.holdout, set: "holdout"))
        for line in verdicts { print(line) }
    }

    static func printLine(_ family: String, _ name: String, _ score: Score, holdout: Score?) {
        var text =
            Measure.pad(family, 26) + Measure.pad(name, 8) + "mape=\(f(score.mape))  vol_err=\(f(score.volumeError))"
        if let holdout { text += "  holdout_mape=\(f(holdout.mape))  holdout_vol_err=\(f(holdout.volumeError))" }
        print(text)
    }

    /// Target: Kalman or fusion MAPE ≤ 0.85 × harmonic mean, and no worse than last sample on both metrics.
    static func verdict(_ family: String, _ scores: [Score], set: String) -> String {
        let hm = scores[3]
        let last = scores[2]
        var met: [String] = []
        for i in [0, 4] {
            let score = scores[i]
            if score.mape <= 0.85 * hm.mape && score.mape <= last.mape && score.volumeError <= last.volumeError {
                met.append(predictorNames[i])
            }
        }
        let status = met.isEmpty ? "MISSED" : "met by " + met.joined(separator: "+")
        return "target \(family) (\(set)): mape<=0.85*hm(\(f(0.85 * hm.mape))) and <=last(mape=\(f(last.mape)) "
            + "vol_err=\(f(last.volumeError))): kalman mape=\(f(scores[0].mape)) vol_err=\(f(scores[0].volumeError)), "
            + "fusion mape=\(f(scores[4].mape)) vol_err=\(f(scores[4].volumeError)) -> \(status)"
    }

    /// The artifact's own predictions for the same ground truth (index-aligned as shipped), for reference.
    static func printReferences(_ folder: String, _ members: [ThroughputTrace]) throws {
        var scores: [String: Score] = [:]
        for trace in members {
            for (kind, values) in try TraceLoader.referencePredictions(directory: folder, trueFile: trace.name) {
                for (index, sample) in trace.samples.enumerated() where index > 0 && index < values.count {
                    scores[kind, default: Score()].add(prediction: values[index], truth: sample.megabitsPerSecond)
                }
            }
        }
        for kind in scores.keys.sorted() {
            if let score = scores[kind] { printLine("nr5g_throughput_prediction", "ref_" + kind, score, holdout: nil) }
        }
    }

    static func f(_ value: Double) -> String { Measure.formatted(value, decimals: 3) }
}

/// Option parsing shared by the trace suites.
enum BenchOptions {
    /// The project's copy of the traces, `Traces/` at the root of the checkout this binary was built from.
    static let projectTraces = "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/Traces"

    /// `--traces DIR`, or the project's copy when the option is absent.
    static func traces(in options: [String]) -> String {
        guard let index = options.firstIndex(of: "--traces"), index + 1 < options.count else { return projectTraces }
        return options[index + 1]
    }
}
