import Testing

@testable import AetherScheduling

#if canImport(Glibc)
    import Glibc
#endif

/// The scoring, the split and the fused predictor's accuracy on the project's held-out traces.
@Suite struct PredictorEvaluationTests {
    @Test func logErrorFloorsBothSidesAndLeavesOutagesOut() {
        var score = ForecastScore()
        score.add(predicted: 2, actual: 1)  // ln 2
        score.add(predicted: 0, actual: 0.001)  // both floored at 0.01: 0
        score.add(predicted: 0.5, actual: 2)  // ln 4
        score.add(predicted: 5, actual: 0)  // an outage: ln 500 only with outages
        #expect(score.count == 4)
        #expect(score.outageCount == 1)
        #expect(abs(score.logError - (log(2) + log(4)) / 3) < 1e-12)
        #expect(abs(score.logErrorWithOutages - (log(2) + log(4) + log(500)) / 4) < 1e-12)
        #expect(abs(score.mape - (1 + 1 + 0.75) / 3) < 1e-12)
        #expect(abs(score.volumeError - (1 + 0.001 + 1.5 + 5) / 3.001) < 1e-12)
        var merged = ForecastScore()
        merged.merge(score)
        merged.merge(score)
        #expect(abs(merged.logError - score.logError) < 1e-15)
        #expect(merged.count == 8)
    }

    @Test func generationsComeFromTheFamilyPrefix() {
        #expect(TraceSplit.generation(ofFamily: "hsdpa_norway_3g") == .threeG)
        #expect(TraceSplit.generation(ofFamily: "lte_belgium_ghent") == .lte)
        #expect(TraceSplit.generation(ofFamily: "nr5g_5gophers") == .fiveG)
        #expect(TraceSplit.generation(ofFamily: "wifi_home") == nil)
    }

    @Test func oddNamePositionsWithinAFamilyAreHeldOut() {
        let traces =
            ["b", "a", "d", "c"].map { ThroughputTrace(family: "f", name: $0, samples: []) }
            + [ThroughputTrace(family: "g", name: "z", samples: [])]
        let assigned = TraceSplit.assign(traces)
        #expect(assigned.map(\.trace.name) == ["a", "b", "c", "d", "z"])
        #expect(assigned.map(\.heldOut) == [false, true, false, true, false])
        #expect(TraceSplit.heldOut(traces).map(\.name) == ["b", "d"])
        #expect(TraceSplit.training(traces).map(\.name) == ["a", "c", "z"])
    }

    /// Replays one estimator over traces as `aether-bench predict` does: forecast, then see the sample.
    static func score(_ make: () -> any BandwidthEstimator, _ traces: [ThroughputTrace]) -> ForecastScore {
        var total = ForecastScore()
        for trace in traces {
            var estimator = make()
            for (index, sample) in trace.samples.enumerated() {
                if index > 0 {
                    total.add(predicted: estimator.predict().bitsPerSecond / 1e6, actual: sample.megabitsPerSecond)
                }
                estimator.update(sample.measurement)
            }
        }
        return total
    }

    @Test func theFusedPredictorBeatsTheLastNonZeroSampleOnTheHeldOutTraces() throws {
        let traces = try TraceLoader.loadAll(directory: ProjectTraces.directory)
        let heldOut = TraceSplit.heldOut(traces)
        let training = TraceSplit.training(traces)
        #expect(heldOut.count == 71 && training.count == 72)
        #expect(
            Set(heldOut.map { $0.family + "/" + $0.name }).isDisjoint(with: training.map { $0.family + "/" + $0.name }))
        let last = Self.score({ LastSampleEstimator() }, heldOut)
        let fusion = Self.score({ FusedBandwidthEstimator() }, heldOut)
        #expect(last.count == fusion.count && last.count > 8_000)
        let ratio = fusion.logError / last.logError
        #expect(ratio <= 0.95, "held-out logerr fusion \(fusion.logError) / last \(last.logError) = \(ratio)")
        #expect(last.logError > 0.2, "the baseline is scored on real traces")
    }

    @Test func theCommittedModelIsWhatTrainingOnTheTrainingHalfGives() throws {
        let traces = try TraceLoader.loadAll(directory: ProjectTraces.directory)
        let rows = TraceSplit.training(traces).flatMap { LogLagModelTrainer.rows(for: $0) }
        let model = try LogLagModelTrainer.train(rows: rows)
        #expect(model == LogLagModel.trained, "retrain with scripts/train-predictor.sh")
    }
}
