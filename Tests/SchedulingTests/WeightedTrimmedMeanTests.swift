import Testing

@testable import AetherScheduling

@Suite struct WeightedTrimmedMeanTests {
    @Test func zeroTrimIsTheWeightedMean() {
        let value = WeightedTrimmedMean.of([(1, 1), (3, 3)], trim: 0)
        #expect(value == 2.5)
    }

    @Test func trimmingDropsTheExtremes() {
        let candidates: [(value: Double, weight: Double)] = [(1, 1), (10, 1), (11, 1), (1000, 1)]
        #expect(WeightedTrimmedMean.of(candidates, trim: 0.25) == 10.5)
    }

    @Test func nearHalfTrimTendsToTheWeightedMedian() {
        let candidates: [(value: Double, weight: Double)] = [(1, 1), (5, 5), (100, 1)]
        let value = WeightedTrimmedMean.of(candidates, trim: 0.49)
        #expect(value == 5)
    }

    @Test func ignoresUnusableWeightsAndReturnsNilWhenNothingIsLeft() {
        #expect(WeightedTrimmedMean.of([(1, 0), (2, -1), (.nan, 1)], trim: 0.2) == nil)
        #expect(WeightedTrimmedMean.of([(7, 1), (9, .infinity)], trim: 0) == 7)
    }
}
