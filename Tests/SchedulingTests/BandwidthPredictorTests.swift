import Testing

@testable import AetherScheduling

@Suite struct BandwidthPredictorTests {
    static func m(_ mbps: Double, at t: Double) -> BandwidthMeasurement {
        BandwidthMeasurement(bitsPerSecond: mbps * 1e6, duration: 1, timestamp: t)
    }

    @Test func measurementFromBytesIsBitsPerSecond() {
        let measurement = BandwidthMeasurement(bytes: 1_000_000, duration: 2, timestamp: 5)
        #expect(measurement.bitsPerSecond == 4_000_000)
        #expect(BandwidthMeasurement(bytes: 10, duration: 0, timestamp: 0).bitsPerSecond == 0)
        #expect(BandwidthMeasurement(bitsPerSecond: -.infinity, duration: 1, timestamp: 0).bitsPerSecond == 0)
    }

    @Test func lastSampleRepeatsTheLastMeasurement() {
        var estimator = LastSampleEstimator()
        estimator.update(Self.m(3, at: 1))
        estimator.update(Self.m(7, at: 2))
        #expect(estimator.predict().bitsPerSecond == 7e6)
        #expect(estimator.predict().sampleCount == 2)
    }

    @Test func ewmaWeighsTheNewestSampleByAlpha() {
        var estimator = EWMAEstimator(alpha: 0.25)
        estimator.update(Self.m(8, at: 1))
        estimator.update(Self.m(16, at: 2))
        #expect(abs(estimator.predict().bitsPerSecond - 10e6) < 1e-6)
    }

    @Test func harmonicMeanUsesOnlyTheLastFiveSamples() {
        var estimator = HarmonicMeanEstimator()
        for (i, value) in [100.0, 1, 2, 4, 4, 4].enumerated() { estimator.update(Self.m(value, at: Double(i))) }
        // 5 / (1/1 + 1/2 + 1/4 + 1/4 + 1/4) = 5 / 2.25
        #expect(abs(estimator.predict().bitsPerSecond - 5 / 2.25 * 1e6) < 1e-3)
    }

    @Test func harmonicMeanIsZeroAfterAnOutageInTheWindow() {
        var estimator = HarmonicMeanEstimator()
        for (i, value) in [5.0, 0, 5].enumerated() { estimator.update(Self.m(value, at: Double(i))) }
        #expect(estimator.predict().bitsPerSecond == 0)
    }

    @Test func sharedPredictorsConformToTheProtocol() async {
        let predictors: [any BandwidthPredictor] = [
            KalmanBandwidthPredictor(KalmanEstimator()), EWMABandwidthPredictor(EWMAEstimator()),
            LastSampleBandwidthPredictor(LastSampleEstimator()),
            HarmonicMeanBandwidthPredictor(HarmonicMeanEstimator()),
            SharedBandwidthPredictor(FusedBandwidthEstimator()),
        ]
        for predictor in predictors {
            for t in 1...12 { await predictor.update(measurement: Self.m(25, at: Double(t))) }
            let forecast = await predictor.predict()
            #expect(abs(forecast.bitsPerSecond - 25e6) < 0.01 * 25e6)
        }
    }

    @Test func lowerBoundSubtractsDeviationsWithAFloor() {
        let prediction = BandwidthPrediction(bitsPerSecond: 100, standardDeviation: 30, sampleCount: 3)
        #expect(prediction.lowerBound(sigmas: 1) == 70)
        #expect(prediction.lowerBound(sigmas: 10, floorFraction: 0.25) == 25)
    }

    @Test func fusionLeansOnTheMemberThatHasBeenRight() {
        var fusion = FusedBandwidthEstimator()
        // An alternating link: last sample is always wrong by a lot, smoothed members are closer.
        for t in 0..<60 { fusion.update(Self.m(t % 2 == 0 ? 10 : 30, at: Double(t))) }
        let fused = fusion.predict().bitsPerSecond
        #expect(fused > 12e6 && fused < 28e6)
    }
}
