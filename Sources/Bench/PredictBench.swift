import AetherScheduling

/// `aether-bench predict [--traces DIR] [--train]` (the project's `Traces/` by default): replays every trace and scores
/// one-step-ahead forecasts.
///
/// For each sample the predictors forecast first, then see the sample. Errors per predictor (`ForecastScore`): MAPE and
/// the symmetric log error |ln(pred/actual)| (both floored at 0.01 Mbit/s) over samples with a non-zero actual, the
/// volume-weighted error Σ|err| / Σactual over all samples, and the log error with outages scored as 0.01 Mbit/s.
/// Traces are split per family by name order (`TraceSplit`): even positions train and tune, odd positions are held
/// out; `holdout_*` columns and the per-generation summary score only the held-out traces.
///
/// `--train` trains `LogLagModel` on the training half and prints the Swift source of `LogLagModel.trained` on
/// stdout (the summary goes to stderr); `scripts/train-predictor.sh` writes it into the source tree.
enum PredictBench: BenchSuite {
    static let name = "predict"
    static let runsByDefault = false
    static let summary = "one-step-ahead bandwidth forecasts over the throughput traces (--train: fit the model)"

    static let predictorNames = ["kalman", "ewma", "last", "hm5", "fusion"]
    static let lastIndex = 2
    static let fusionIndex = 4
    /// The fused predictor must reach this fraction of the last non-zero sample's held-out log error.
    static let logErrorTarget = 0.95

    static func makePredictors() -> [any BandwidthPredictor] {
        [
            KalmanBandwidthPredictor(KalmanEstimator()), EWMABandwidthPredictor(EWMAEstimator()),
            LastSampleBandwidthPredictor(LastSampleEstimator()),
            HarmonicMeanBandwidthPredictor(HarmonicMeanEstimator()),
            SharedBandwidthPredictor(FusedBandwidthEstimator()),
        ]
    }

    /// Scores of every predictor on one trace, in `predictorNames` order.
    static func replay(_ trace: ThroughputTrace) async -> [ForecastScore] {
        let predictors = makePredictors()
        var scores = Array(repeating: ForecastScore(), count: predictors.count)
        for (index, sample) in trace.samples.enumerated() {
            let truth = sample.megabitsPerSecond
            for (i, predictor) in predictors.enumerated() {
                if index > 0 {
                    let forecast = await predictor.predict().bitsPerSecond / 1e6
                    scores[i].add(predicted: forecast, actual: truth)
                }
                await predictor.update(measurement: sample.measurement)
            }
        }
        return scores
    }

    static func run(options: [String]) async throws {
        let directory = BenchOptions.traces(in: options)
        let traces = try TraceLoader.loadAll(directory: directory)
        if options.contains("--train") {
            try train(traces)
            return
        }
        print("predict: \(traces.count) traces from \(Set(traces.map(\.family)).count) families (one-step-ahead)")
        let assigned = TraceSplit.assign(traces)
        var families: [String] = []
        for (trace, _) in assigned where !families.contains(trace.family) { families.append(trace.family) }
        let empty = Array(repeating: ForecastScore(), count: predictorNames.count)
        var overall = (all: empty, tune: empty, holdout: empty)
        var byGeneration: [TraceSplit.Generation: [ForecastScore]] = [:]
        var verdicts: [String] = []
        for family in families {
            let members = assigned.filter { $0.trace.family == family }
            var all = empty
            var holdout = empty
            for (trace, heldOut) in members {
                let scores = await replay(trace)
                for i in scores.indices {
                    all[i].merge(scores[i])
                    overall.all[i].merge(scores[i])
                    if heldOut {
                        holdout[i].merge(scores[i])
                        overall.holdout[i].merge(scores[i])
                        if let generation = TraceSplit.generation(ofFamily: family) {
                            byGeneration[generation, default: empty][i].merge(scores[i])
                        }
                    } else {
                        overall.tune[i].merge(scores[i])
                    }
                }
            }
            let samples = members.reduce(0) { $0 + $1.trace.samples.count }
            let heldOut = members.filter(\.heldOut).count
            print("family \(family)  traces=\(members.count) samples=\(samples) held_out=\(heldOut)")
            for (i, name) in predictorNames.enumerated() {
                printLine(family, name, all[i], holdout: heldOut > 0 ? holdout[i] : nil)
            }
            if family == "nr5g_throughput_prediction" {
                try printReferences(directory + "/" + family, members.map(\.trace))
            }
            verdicts.append(verdict(family, heldOut > 0 ? holdout : all, set: heldOut > 0 ? "holdout" : "all"))
        }
        for (i, name) in predictorNames.enumerated() {
            printLine("overall", name, overall.all[i], holdout: overall.holdout[i])
        }
        for (i, name) in predictorNames.enumerated() {
            let score = overall.tune[i]
            print(
                "overall_tune  \(Measure.pad(name, 8)) mape=\(f(score.mape))  vol_err=\(f(score.volumeError))"
                    + "  logerr=\(f(score.logError))")
        }
        verdicts.append(verdict("overall", overall.holdout, set: "holdout"))
        for line in verdicts { print(line) }

        print("held-out traces by generation (logerr over non-zero actuals, floored at 0.01 Mbit/s):")
        var groups: [(String, [ForecastScore])] = TraceSplit.Generation.allCases.compactMap { generation in
            byGeneration[generation].map { (generation.rawValue, $0) }
        }
        groups.append(("overall", overall.holdout))
        for (group, scores) in groups {
            for (i, name) in predictorNames.enumerated() {
                let score = scores[i]
                print(
                    "holdout " + Measure.pad(group, 8) + Measure.pad(name, 8) + "mape=\(f(score.mape))  "
                        + "logerr=\(f(score.logError))  logerr_with_outages=\(f(score.logErrorWithOutages))  "
                        + "samples=\(score.count) outages=\(score.outageCount)")
            }
        }
        var ratios: [String] = []
        for (group, scores) in groups {
            ratios.append("\(group)=\(f(scores[fusionIndex].logError / scores[lastIndex].logError))")
        }
        let ratio = overall.holdout[fusionIndex].logError / overall.holdout[lastIndex].logError
        print(
            "target logerr fusion/last (holdout): " + ratios.joined(separator: " ")
                + " -> \(ratio <= logErrorTarget ? "met" : "MISSED") (<= \(logErrorTarget))")
        printCost()
    }

    /// The cost of one forecast: the model alone, and the fused estimator's update plus forecast.
    static func printCost() {
        var history = LogLagHistory()
        for k in 0..<LogLagModel.lagCount { history.append(megabitsPerSecond: 20 + Double(k)) }
        let model = LogLagModel.trained
        let lags = history.heldLags
        let iterations = 100_000
        var sink = 0.0
        let modelSeconds = Measure.median {
            for k in 0..<iterations {
                var shifted = lags
                shifted[0] += Double(k & 7) * 0.01
                sink += model.predictMegabitsPerSecond(logLags: shifted)
            }
        }
        var fusion = FusedBandwidthEstimator()
        let fusionSeconds = Measure.median {
            for k in 0..<iterations {
                fusion.update(
                    BandwidthMeasurement(bitsPerSecond: 2e7 + Double(k & 15) * 1e5, duration: 1, timestamp: Double(k)))
                sink += fusion.predict().bitsPerSecond
            }
        }
        print(
            "cost  model=\(f(modelSeconds / Double(iterations) * 1e6)) us/forecast  "
                + "fusion_update+predict=\(f(fusionSeconds / Double(iterations) * 1e6)) us  "
                + "trees=\(model.treeCount) parameters=\(model.features.count + 4 * model.thresholds.count + 4 * model.leaves.count + 8) bytes"
                + (sink.isNaN ? " nan" : ""))
    }

    /// `--train`: fits `LogLagModel` on the training half and prints its Swift source.
    static func train(_ traces: [ThroughputTrace]) throws {
        let training = TraceSplit.training(traces)
        let rows = training.flatMap { LogLagModelTrainer.rows(for: $0) }
        let configuration = LogLagModelTrainer.Configuration()
        let started = Measure.now()
        let model = try LogLagModelTrainer.train(rows: rows, configuration: configuration)
        let seconds = Measure.now() - started
        let identity = try LogLagModel(base: 0, features: [], thresholds: [], leaves: [])
        let loss = LogLagModelTrainer.meanAbsoluteLogError(model, rows: rows)
        let lastLoss = LogLagModelTrainer.meanAbsoluteLogError(identity, rows: rows)
        let provenance = [
            "Generated by `aether-bench predict --train` (scripts/train-predictor.sh); do not edit by hand.",
            "Training data: the training half of the project's Traces/ (TraceSplit: per family, traces sorted by",
            "name, even positions), \(training.count) traces, \(rows.count) rows (LogLagModelTrainer.rows: one per",
            "sample with a non-zero actual after a non-zero sample). Gradient boosting, absolute loss:",
            "\(configuration.trees) trees of depth \(LogLagModel.depth), learning rate \(configuration.learningRate), "
                + "\(configuration.bins) quantile bins,",
            "at least \(configuration.minimumLeafRows) rows per side of a split. Training |ln(pred/actual)|: "
                + "\(f(loss)) (last non-zero sample: \(f(lastLoss))).",
        ]
        print(LogLagModelTrainer.swiftSource(model, provenance: provenance), terminator: "")
        BenchMain.printError(
            "predict --train: \(rows.count) rows from \(training.count) traces, \(model.treeCount) trees in "
                + "\(f(seconds)) s; training logerr \(f(loss)) vs last \(f(lastLoss))")
    }

    static func printLine(_ family: String, _ name: String, _ score: ForecastScore, holdout: ForecastScore?) {
        var text =
            Measure.pad(family, 26) + Measure.pad(name, 8)
            + "mape=\(f(score.mape))  logerr=\(f(score.logError))  vol_err=\(f(score.volumeError))"
        if let holdout {
            text +=
                "  holdout_mape=\(f(holdout.mape))  holdout_logerr=\(f(holdout.logError))"
                + "  holdout_vol_err=\(f(holdout.volumeError))"
        }
        print(text)
    }

    /// Earlier target: Kalman or fusion MAPE ≤ 0.85 × harmonic mean, and no worse than last sample on both metrics.
    static func verdict(_ family: String, _ scores: [ForecastScore], set: String) -> String {
        let hm = scores[3]
        let last = scores[lastIndex]
        var met: [String] = []
        for i in [0, fusionIndex] {
            let score = scores[i]
            if score.mape <= 0.85 * hm.mape && score.mape <= last.mape && score.volumeError <= last.volumeError {
                met.append(predictorNames[i])
            }
        }
        let status = met.isEmpty ? "MISSED" : "met by " + met.joined(separator: "+")
        return "target \(family) (\(set)): mape<=0.85*hm(\(f(0.85 * hm.mape))) and <=last(mape=\(f(last.mape)) "
            + "vol_err=\(f(last.volumeError))): kalman mape=\(f(scores[0].mape)) vol_err=\(f(scores[0].volumeError)), "
            + "fusion mape=\(f(scores[fusionIndex].mape)) vol_err=\(f(scores[fusionIndex].volumeError)) -> \(status)"
    }

    /// The artifact's own predictions for the same ground truth (index-aligned as shipped), for reference.
    static func printReferences(_ folder: String, _ members: [ThroughputTrace]) throws {
        var scores: [String: ForecastScore] = [:]
        for trace in members {
            for (kind, values) in try TraceLoader.referencePredictions(directory: folder, trueFile: trace.name) {
                for (index, sample) in trace.samples.enumerated() where index > 0 && index < values.count {
                    scores[kind, default: ForecastScore()].add(
                        predicted: values[index], actual: sample.megabitsPerSecond)
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
    static let projectTraces = projectRoot + "/Traces"
    /// The bench's out-of-sample traces, `Bench/OutOfSample/` of the same checkout (its SOURCES.md): never in
    /// `Traces/`, so nothing the project tunes or tests reads them.
    static let projectOutOfSample = projectRoot + "/Bench/OutOfSample"
    /// The root of the checkout this binary was built from.
    static let projectRoot = "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/")

    /// `--traces DIR`, or the project's copy when the option is absent.
    static func traces(in options: [String]) -> String {
        guard let index = options.firstIndex(of: "--traces"), index + 1 < options.count else { return projectTraces }
        return options[index + 1]
    }
}
