import AetherIO
import AetherTestSupport
import Testing

@Suite struct AetherClockTests {
    @Test func aManualClockStartsWhereItIsToldAndAdvancesBothReadingsTogether() {
        let clock = ManualClock(wall: .milliseconds(1_750_000_000_000), monotonic: .milliseconds(1_000))
        #expect(clock.wallNanoseconds() == 1_750_000_000_000_000_000)
        #expect(clock.monotonicNanoseconds() == 1_000_000_000)
        clock.advance(by: .microseconds(1_500))
        #expect(clock.wallMilliseconds() == 1_750_000_000_001)
        #expect(clock.monotonicMilliseconds() == 1_001)
        #expect(clock.monotonicNanoseconds() == 1_001_500_000)
        #expect(clock.monotonicSeconds() == 1.0015)
    }

    @Test func aNegativeStepIsIgnoredAndSetWallMovesOnlyTheWallReading() {
        let clock = ManualClock()
        #expect(clock.wallNanoseconds() == 1_700_000_000 * 1_000_000_000)
        #expect(clock.monotonicNanoseconds() == 0)
        clock.advance(by: .seconds(-5))
        #expect(clock.monotonicNanoseconds() == 0)
        #expect(clock.wallSeconds() == 1_700_000_000)
        clock.setWall(.seconds(1_000))
        #expect(clock.wallMilliseconds() == 1_000_000)
        #expect(clock.monotonicNanoseconds() == 0)
    }

    @Test func millisecondsRoundDownAlsoBeforeTheOrigin() {
        let clock = ManualClock(wall: .nanoseconds(-1))
        #expect(clock.wallMilliseconds() == -1)
        clock.setWall(.nanoseconds(1_999_999))
        #expect(clock.wallMilliseconds() == 1)
        #expect(AetherTime.floorDivide(-1_000_000, 1_000_000) == -1)
        #expect(AetherTime.floorDivide(-1_000_001, 1_000_000) == -2)
    }

    @Test func durationsConvertToNanosecondsAndSaturate() {
        #expect(AetherTime.nanoseconds(.milliseconds(14_999)) == 14_999_000_000)
        #expect(AetherTime.nanoseconds(.seconds(-2)) == -2_000_000_000)
        #expect(AetherTime.nanoseconds(.seconds(Int64.max)) == .max)
        #expect(AetherTime.nanoseconds(.seconds(Int64.min)) == .min)
    }

    @Test func theSystemClockReadsRealtimeAndMonotonicTimeAndAppliesItsSkew() {
        let clock = SystemClock()
        // 2024-01-01 and 2200-01-01: any real wall clock of this century lies between.
        #expect(clock.wallSeconds() > 1_704_067_200 && clock.wallSeconds() < 7_258_118_400)
        let first = clock.monotonicNanoseconds()
        let second = clock.monotonicNanoseconds()
        #expect(first > 0 && second >= first)
        let skewed = SystemClock(wallSkew: .seconds(3_600))
        let difference = skewed.wallNanoseconds() - clock.wallNanoseconds()
        // One hour ahead, give or take the time between the two reads (well under a minute).
        #expect(difference > 3_540 * 1_000_000_000 && difference < 3_660 * 1_000_000_000)
    }
}
