import Testing

@testable import AetherScheduling

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct LogLagModelTests {
    static let floor = log(0.01)

    /// A walk over the trained arrays written apart from `predictLog`: recursion over explicit child indices.
    static func referenceLog(_ model: LogLagModel, _ x: [Double]) -> Double {
        func walk(_ tree: Int, _ node: Int) -> Double {
            if node >= LogLagModel.nodesPerTree {
                return Double(model.leaves[tree * LogLagModel.leavesPerTree + node - LogLagModel.nodesPerTree])
            }
            let index = tree * LogLagModel.nodesPerTree + node
            let goesLeft = x[Int(model.features[index])] <= Double(model.thresholds[index])
            return walk(tree, goesLeft ? 2 * node + 1 : 2 * node + 2)
        }
        var sum = x[0] + model.base
        for tree in 0..<model.treeCount { sum += walk(tree, 0) }
        return min(log(1e9), max(floor, sum))
    }

    @Test func featuresAreTheNewestLagItsDifferencesAndTheSpread() {
        let features = LogLagModel.features(logLags: [3, 1, 1, 1, 1, 1, 1, 1, 1, 1])
        #expect(features.count == 12)
        #expect(features[0] == 3)
        #expect(features[1...9].allSatisfy { $0 == -2 })
        // Mean 1.2; deviations 1.8 and nine of −0.2: variance (3.24 + 0.36) / 10 = 0.36.
        #expect(abs(features[10] - 0.6) < 1e-12)
        #expect(features[11] == 10)
    }

    @Test func shortHistoriesArePaddedWithTheOldestLag() {
        // Lags 2, 5, 5, ...: mean 4.7, variance (2.7² + 9 × 0.3²) / 10 = 0.81.
        let two = LogLagModel.features(logLags: [2, 5])
        #expect(Array(two[0..<10]) == [2, 3, 3, 3, 3, 3, 3, 3, 3, 3])
        #expect(abs(two[10] - 0.9) < 1e-12)
        #expect(two[11] == 2)
        #expect(LogLagModel.features(logLags: []) == [Self.floor] + Array(repeating: 0, count: 11))
    }

    @Test func aHandBuiltTreeRoutesLessOrEqualToTheLeft() throws {
        // Root: l₀ <= 1 ? (spread <= 0.5 ? leaf 0 : leaf 2) : leaf 4; the other nodes never split (threshold +∞).
        let model = try LogLagModel(
            base: 0.5, features: [0, 10, 0, 0, 0, 0, 0], thresholds: [1, 0.5] + Array(repeating: .infinity, count: 5),
            leaves: [0.25, 9, -0.25, 9, 2, 9, 9, 9])
        #expect(model.treeCount == 1)
        let flat = model.predictLog(features: [1] + Array(repeating: 0, count: 11))
        #expect(flat == 1 + 0.5 + 0.25)  // 1 <= 1: left, spread 0 <= 0.5: left
        let spread = model.predictLog(features: [1] + Array(repeating: 0, count: 9) + [0.75, 10])
        #expect(spread == 1 + 0.5 - 0.25)
        let high = model.predictLog(features: [1.5] + Array(repeating: 0, count: 11))
        #expect(high == 1.5 + 0.5 + 2)
        #expect(model.predictLog(features: [1, 2]) == Self.floor, "a vector of the wrong width reads as the floor")
    }

    @Test func malformedParametersAreATypedError() {
        let cases: [(UInt8, Float, Float, Int)] = [
            (12, 1, 0, 8),  // feature index out of range
            (0, .nan, 0, 8),  // NaN threshold
            (0, 1, .infinity, 8),  // infinite leaf
            (0, 1, 0, 7),  // leaves of a partial tree
        ]
        for (feature, threshold, leaf, leafCount) in cases {
            #expect(throws: SchedulingError.self) {
                _ = try LogLagModel(
                    base: 0, features: Array(repeating: feature, count: 7),
                    thresholds: Array(repeating: threshold, count: 7), leaves: Array(repeating: leaf, count: leafCount))
            }
        }
        do {
            _ = try LogLagModel(base: .nan, features: [], thresholds: [], leaves: [])
            Issue.record("a NaN base was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }

    @Test func theTrainedParametersPassValidation() throws {
        let trained = LogLagModel.trained
        #expect(trained.treeCount == LogLagModelTrainer.Configuration().trees)
        let checked = try LogLagModel(
            base: trained.base, features: trained.features, thresholds: trained.thresholds, leaves: trained.leaves)
        #expect(checked == trained)
    }

    @Test(arguments: [
        [25.0, 25, 25, 25, 25, 25, 25, 25, 25, 25],
        [10.0, 100, 100, 100, 100, 100, 100, 100, 100, 100],
        [0.5, 0.01, 0.01, 2, 3, 1, 0.8, 1.2, 0.9, 1],
        [900.0, 1200, 300, 1500, 20, 800, 1000, 1100, 950, 1300],
    ])
    func theTrainedModelMatchesAnIndependentWalkOnFixedInputs(_ rates: [Double]) {
        let lags = rates.map { log($0) }
        let model = LogLagModel.trained
        let expected = exp(Self.referenceLog(model, LogLagModel.features(logLags: lags)))
        let forecast = model.predictMegabitsPerSecond(logLags: lags)
        #expect(abs(forecast - expected) <= 1e-12 * expected)
        // What a forecaster must do with these: stay near a steady level, land between an old and a new level.
        #expect(forecast >= 0.01 && forecast <= 1e9)
        if rates.allSatisfy({ $0 == rates[0] }) { #expect(abs(forecast - rates[0]) < 0.05 * rates[0]) }
        if rates[0] == 10 && rates[1] == 100 { #expect(forecast >= 10 * 0.95 && forecast < 100) }
    }

    @Test func theTrainedModelGivesThesePinnedForecasts() {
        // Regenerate these after retraining (scripts/train-predictor.sh): they catch an unintended model change.
        let cases: [([Double], Double)] = [
            ([25, 25, 25, 25, 25, 25, 25, 25, 25, 25], 25.013086029198647),
            ([10, 100, 100, 100, 100, 100, 100, 100, 100, 100], 37.2916228199162),
            ([0.5, 0.01, 0.01, 2, 3, 1, 0.8, 1.2, 0.9, 1], 0.87670110992862826),
        ]
        for (rates, pinned) in cases {
            let forecast = LogLagModel.trained.predictMegabitsPerSecond(logLags: rates.map { log($0) })
            #expect(abs(forecast - pinned) <= 1e-9 * pinned, "\(rates): \(forecast)")
        }
    }

    @Test func theForecastIsNeverZeroNaNOrInfiniteOnAnyInput() {
        let hostile: [Double] = [
            0, -0.0, .leastNonzeroMagnitude, .nan, .infinity, -.infinity, 1e300, -1e300, .greatestFiniteMagnitude,
        ]
        let model = LogLagModel.trained
        for value in hostile {
            for position in [0, 4, 9] {
                var lags = Array(repeating: log(20.0), count: 10)
                lags[position] = value
                let forecast = model.predictMegabitsPerSecond(logLags: lags)
                #expect(forecast.isFinite && forecast >= 0.01 * (1 - 1e-12) && forecast <= 1e9 * (1 + 1e-12))
            }
            let all = model.predictMegabitsPerSecond(logLags: Array(repeating: value, count: 10))
            #expect(all.isFinite && all > 0, "all lags \(value)")
            let rate = LogLagHistory.logRate(megabitsPerSecond: value)
            #expect(rate.isFinite && rate >= Self.floor && rate <= log(1e9), "rate \(value)")
        }
    }

    @Test func theHistoryFreezesItsLagsAtTheLastNonZeroMeasurement() {
        var history = LogLagHistory()
        let changed0 = history.append(megabitsPerSecond: 0)
        #expect(!changed0)
        #expect(history.heldLags.isEmpty)
        let changed8 = history.append(megabitsPerSecond: 8)
        #expect(changed8)
        #expect(history.heldLags == [log(8), Self.floor])
        let again0 = history.append(megabitsPerSecond: 0)
        #expect(!again0)
        #expect(history.heldLags == [log(8), Self.floor], "an outage does not move the held lags")
        let changed4 = history.append(megabitsPerSecond: 4)
        #expect(changed4)
        #expect(history.heldLags == [log(4), Self.floor, log(8), Self.floor])
        for _ in 0..<20 { history.append(megabitsPerSecond: 2) }
        #expect(history.heldLags.count == LogLagModel.lagCount)
        #expect(history.count == 24)
    }
}

@Suite struct LogLagModelTrainerTests {
    static func row(_ spread: Double, _ target: Double) -> LogLagModelTrainer.Row {
        .init(features: [1] + Array(repeating: 0, count: 9) + [spread, 10], target: target)
    }

    @Test func boostingLearnsAStepInOneFeature() throws {
        // Target +1 when the spread exceeds 1, −1 below; l₀ and the differences carry nothing.
        var rows: [LogLagModelTrainer.Row] = []
        for k in 0..<400 {
            let spread = Double(k) / 200
            rows.append(Self.row(spread, spread > 1 ? 1 : -1))
        }
        var configuration = LogLagModelTrainer.Configuration()
        configuration.trees = 60
        let model = try LogLagModelTrainer.train(rows: rows, configuration: configuration)
        #expect(model.treeCount == 60)
        let high = model.predictLog(features: Self.row(1.8, 0).features) - 1
        let low = model.predictLog(features: Self.row(0.2, 0).features) - 1
        #expect(abs(high - 1) < 0.05, "\(high)")
        #expect(abs(low + 1) < 0.05, "\(low)")
        #expect(LogLagModelTrainer.meanAbsoluteLogError(model, rows: rows) < 0.1)
        // Deterministic: the same rows give the same model.
        #expect(try LogLagModelTrainer.train(rows: rows, configuration: configuration) == model)
    }

    @Test func badTrainingInputIsATypedError() {
        let good = Self.row(0, 0)
        let inputs: [[LogLagModelTrainer.Row]] = [
            [], [.init(features: [1, 2], target: 0)], [good, .init(features: good.features, target: .nan)],
            [.init(features: [.infinity] + good.features.dropFirst(), target: 0)],
        ]
        for rows in inputs {
            #expect(throws: SchedulingError.self) { _ = try LogLagModelTrainer.train(rows: rows) }
        }
    }

    @Test func rowsAreTheLagsAtTheLastNonZeroSampleAndSkipOutageTargets() {
        let trace = ThroughputTrace(
            family: "test", name: "t",
            samples: [10.0, 0, 20, 0, 5].enumerated().map {
                .init(start: Double($0), duration: 1, megabitsPerSecond: $1)
            })
        let rows = LogLagModelTrainer.rows(for: trace)
        // Targets: 20 (forecast from the lags at 10) and 5 (from the lags at 20, with the outage before it as a lag).
        #expect(rows.count == 2)
        #expect(rows[0].features == LogLagModel.features(logLags: [log(10)]))
        #expect(abs(rows[0].target - log(2)) < 1e-12)
        #expect(rows[1].features == LogLagModel.features(logLags: [log(20), log(0.01), log(10)]))
        #expect(abs(rows[1].target - log(0.25)) < 1e-12)
    }
}
