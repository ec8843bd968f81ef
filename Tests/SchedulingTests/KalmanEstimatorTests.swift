import Testing

@testable import AetherScheduling

@Suite struct KalmanEstimatorTests {
    static func feed(_ values: [Double], into filter: inout KalmanEstimator, start: Double = 0) {
        for (i, value) in values.enumerated() {
            filter.update(BandwidthMeasurement(bitsPerSecond: value, duration: 1, timestamp: start + Double(i + 1)))
        }
    }

    /// Deterministic pseudo-noise in [-1, 1].
    static func noise(_ i: Int) -> Double {
        var z = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 29)) &* 0xBF58_476D_1CE4_E5B9
        return Double(z >> 11) / Double(1 << 53) * 2 - 1
    }

    @Test func convergesToANewLevelAfterAStep() {
        var filter = KalmanEstimator()
        Self.feed(Array(repeating: 10e6, count: 30), into: &filter)
        #expect(abs(filter.predict().bitsPerSecond - 10e6) < 0.01 * 10e6)
        Self.feed(Array(repeating: 40e6, count: 15), into: &filter, start: 30)
        #expect(abs(filter.predict().bitsPerSecond - 40e6) < 0.03 * 40e6)
    }

    @Test func tracksARampWithAPositiveSlope() {
        var filter = KalmanEstimator()
        let ramp = (0..<60).map { 5e6 + Double($0) * 0.5e6 }
        Self.feed(ramp, into: &filter)
        let forecast = filter.predict().bitsPerSecond
        #expect(filter.state[1] > 0.3e6)
        #expect(abs(forecast - ramp[59]) < 0.05 * ramp[59])
        #expect(forecast > ramp[58])
    }

    @Test func staysNearTheMeanUnderNoise() {
        var filter = KalmanEstimator()
        let noisy = (0..<200).map { 20e6 * (1 + 0.2 * Self.noise($0)) }
        Self.feed(noisy, into: &filter)
        #expect(abs(filter.predict().bitsPerSecond - 20e6) < 0.25 * 20e6)
        #expect(filter.varianceEstimate > 0.05)
        #expect(filter.consecutiveLowVarianceSamples == 0)
    }

    @Test func downWeightsASingleSpikeButDoesNotDiscardIt() {
        var filter = KalmanEstimator()
        Self.feed((0..<40).map { 10e6 * (1 + 0.01 * Self.noise($0)) }, into: &filter)
        var plain = KalmanEstimator(
            parameters: {
                var p = KalmanEstimator.Parameters.default
                p.anomalyThreshold = .infinity
                return p
            }())
        Self.feed((0..<40).map { 10e6 * (1 + 0.01 * Self.noise($0)) }, into: &plain)
        let before = filter.predict().bitsPerSecond
        Self.feed([100e6], into: &filter, start: 40)
        Self.feed([100e6], into: &plain, start: 40)
        let after = filter.predict().bitsPerSecond
        #expect(filter.downWeightedCount == 1)
        #expect(plain.downWeightedCount == 0)
        #expect(after > before)  // moved: the spike was not discarded
        #expect(after < plain.predict().bitsPerSecond)  // but less than at full weight
    }

    @Test func acceptsASecondOutlierOnTheSameSideAsALevelShift() {
        var filter = KalmanEstimator()
        Self.feed((0..<40).map { 10e6 * (1 + 0.01 * Self.noise($0)) }, into: &filter)
        Self.feed([60e6, 60e6], into: &filter, start: 40)
        #expect(filter.downWeightedCount == 1)
        #expect(filter.predict().bitsPerSecond > 40e6)
    }

    @Test func countsConsecutiveLowVarianceSamplesAndResetsOnNoise() {
        var filter = KalmanEstimator()
        Self.feed(Array(repeating: 50e6, count: 40), into: &filter)
        #expect(filter.varianceEstimate < UploadConstants.transportStabilityThreshold)
        #expect(filter.consecutiveLowVarianceSamples >= 10)
        Self.feed([20e6], into: &filter, start: 40)
        #expect(filter.consecutiveLowVarianceSamples == 0)
    }

    @Test func pathChangeRaisesUncertaintyAndSpeedsAdaptation() {
        var parameters = KalmanEstimator.Parameters.default
        parameters.levelNoise = 0.05
        var quiet = KalmanEstimator(parameters: parameters)
        Self.feed((0..<40).map { 10e6 * (1 + 0.02 * Self.noise($0)) }, into: &quiet)
        var moved = quiet
        moved.notePathChange()
        #expect(moved.covariance[0] > quiet.covariance[0])
        Self.feed([20e6, 20e6], into: &quiet, start: 40)
        Self.feed([20e6, 20e6], into: &moved, start: 40)
        #expect(abs(moved.state[0] - 20e6) < abs(quiet.state[0] - 20e6))
    }

    @Test func fallsBackToTwoStatesWhenTheCovarianceIsIllConditioned() {
        var parameters = KalmanEstimator.Parameters.default
        parameters.conditionLimit = 10
        var filter = KalmanEstimator(parameters: parameters)
        Self.feed(Array(repeating: 10e6, count: 5), into: &filter)
        #expect(filter.fallbackCount >= 1)
        #expect(filter.usesReducedModel || filter.fallbackCount >= 1)
        var normal = KalmanEstimator()
        Self.feed(Array(repeating: 10e6, count: 5), into: &normal)
        #expect(normal.fallbackCount == 0)
        #expect(!normal.usesReducedModel)
    }

    @Test func reducedModelKeepsTheSecondDerivativeAtZero() {
        var parameters = KalmanEstimator.Parameters.default
        parameters.conditionLimit = 10
        var filter = KalmanEstimator(parameters: parameters)
        Self.feed((0..<20).map { 5e6 + Double($0) * 1e6 }, into: &filter)
        if filter.usesReducedModel {
            #expect(filter.state[2] == 0)
            #expect(filter.covariance[8] == 0)
        }
        #expect(filter.predict().bitsPerSecond > 20e6)
    }

    @Test(arguments: [
        ([2.0, 0, 0, 0, 3, 0, 0, 0, 5], [2.0, 3, 5]),
        ([2.0, 1, 0, 1, 2, 0, 0, 0, 7], [1.0, 3, 7]),
        ([4.0, 1, 1, 1, 4, 1, 1, 1, 4], [3.0, 3, 6]),
    ])
    func symmetricEigenvaluesMatchKnownSpectra(matrix: [Double], expected: [Double]) {
        let values = KalmanEstimator.eigenvalues3(matrix).sorted()
        for (value, want) in zip(values, expected) { #expect(abs(value - want) < 1e-9) }
    }

    @Test func neverForecastsNegativeThroughput() {
        var filter = KalmanEstimator()
        Self.feed([50e6, 40e6, 20e6, 5e6, 0, 0, 0], into: &filter)
        #expect(filter.predict().bitsPerSecond >= 0)
        #expect(filter.predict(horizon: 10).bitsPerSecond >= 0)
    }
}
