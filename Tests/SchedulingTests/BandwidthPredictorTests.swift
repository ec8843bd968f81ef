import Testing

@testable import AetherScheduling

#if canImport(Glibc)
    import Glibc
#endif

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

    @Test func harmonicMeanSkipsAnOutageInTheWindow() {
        var estimator = HarmonicMeanEstimator()
        for (i, value) in [5.0, 0, 5].enumerated() { estimator.update(Self.m(value, at: Double(i))) }
        #expect(estimator.predict().bitsPerSecond == 5e6)
        #expect(estimator.predict().sampleCount == 3)
    }

    /// Every predictor of the bench, Kalman first, the fused one last.
    static func everyEstimator() -> [any BandwidthEstimator] {
        [KalmanEstimator(), EWMAEstimator(), LastSampleEstimator(), HarmonicMeanEstimator(), FusedBandwidthEstimator()]
    }

    @Test func everyPredictorHoldsItsLastNonZeroEstimateThroughAnOutageInTheMiddle() {
        for var estimator in Self.everyEstimator() {
            let rates = [40.0, 42, 38, 45, 41, 39, 44, 40, 43, 41, 40, 42]
            for (t, rate) in rates.enumerated() { estimator.update(Self.m(rate, at: Double(t))) }
            let before = estimator.predict().bitsPerSecond
            #expect(before > 30e6 && before < 55e6, "\(estimator.name)")
            for t in 12..<20 {
                estimator.update(Self.m(0, at: Double(t)))
                #expect(estimator.predict().bitsPerSecond == before, "\(estimator.name) at \(t)")
            }
            // The link comes back: the forecast follows it, from the held level, never through zero.
            estimator.update(Self.m(40, at: 20))
            let after = estimator.predict().bitsPerSecond
            #expect(after > 30e6 && after < 55e6, "\(estimator.name)")
        }
    }

    @Test func everyPredictorForecastsTheFloorWhenATraceStartsWithAnOutage() {
        for var estimator in Self.everyEstimator() {
            #expect(estimator.predict().bitsPerSecond == 0, "\(estimator.name): no measurement, no forecast")
            for t in 0..<3 {
                estimator.update(Self.m(0, at: Double(t)))
                #expect(
                    estimator.predict().bitsPerSecond == BandwidthPrediction.minimumBitsPerSecond, "\(estimator.name)")
            }
            // The zeros were not averaged in: the first sample after them is the estimate.
            estimator.update(Self.m(30, at: 3))
            let forecast = estimator.predict().bitsPerSecond
            let tolerance = estimator.name == "fusion" ? 0.2 : 1e-9
            #expect(abs(forecast - 30e6) <= tolerance * 30e6, "\(estimator.name): \(forecast)")
        }
    }

    @Test func noPredictorForecastsZeroNaNOrInfinityOnHostileMeasurements() {
        let rates: [Double] = [
            .nan, .infinity, -.infinity, -5, 0, .leastNonzeroMagnitude, 1e300, .greatestFiniteMagnitude, 0, 3,
        ]
        for var estimator in Self.everyEstimator() {
            for (t, rate) in rates.enumerated() {
                estimator.update(BandwidthMeasurement(bitsPerSecond: rate, duration: 1, timestamp: Double(t)))
                let forecast = estimator.predict()
                #expect(
                    forecast.bitsPerSecond.isFinite && forecast.bitsPerSecond > 0, "\(estimator.name) after \(rate)")
                #expect(forecast.standardDeviation.isFinite, "\(estimator.name) after \(rate)")
            }
        }
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

    @Test func fusionForecastIsTheTrainedModelOnTheLagsAtTheLastNonZeroSample() {
        var fusion = FusedBandwidthEstimator()
        let rates = [12.0, 30, 0, 18, 25, 0, 0]
        for (t, rate) in rates.enumerated() { fusion.update(Self.m(rate, at: Double(t))) }
        // Held at the sample of 25 Mbit/s; the outage before it is a lag at the 0.01 Mbit/s floor.
        let lags = [25.0, 18, 0.01, 30, 12].map { log($0) }
        let expected = LogLagModel.trained.predictMegabitsPerSecond(logLags: lags) * 1e6
        #expect(abs(fusion.predict().bitsPerSecond - expected) <= 1e-9 * expected)
        #expect(fusion.predict().sampleCount == rates.count)
        #expect(fusion.memberPredictions.count == 4)
        #expect(fusion.memberPredictions[2].bitsPerSecond == 25e6)
    }
}
