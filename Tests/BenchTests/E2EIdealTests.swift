import AetherLinkLab
import Testing

@testable import aether_bench

/// The yardsticks of the link-lab lines: the ideal over a client's own span (the trace's capacity integrated over
/// exactly the seconds it ran, from its offset), the time to carry a file that sets the cap, the steady link's
/// limit, and the wait for a path change's window to close.
@Suite struct E2EIdealTests {
    static func direction(_ rate: LinkLabRate) -> LinkLabDirection {
        LinkLabDirection(delay: 0.04, lossRate: 0.01, rate: rate)
    }

    /// 8 Mbit/s for 10 s, then nothing for 10 s, cycled: 10 MB a cycle.
    static let onOff = direction(
        .trace([.init(duration: 10, megabitsPerSecond: 8), .init(duration: 10, megabitsPerSecond: 0)]))

    @Test func onAConstantRateTheIdealIsTheFileAtThatRateWhateverTheSpan() throws {
        let link = Self.direction(.constant(megabitsPerSecond: 8))
        for (offset, seconds) in [(0.0, 1.0), (3.0, 2.5), (100.0, 40.0)] {
            let ideal = try #require(E2EIdeal.idealSeconds(bytes: 1_000_000, link, offset: offset, seconds: seconds))
            #expect(abs(ideal - 1) < 1e-9)
            let ratio = E2EIdeal.ratioToIdeal(bytes: 1_000_000, link, offset: offset, seconds: seconds)
            #expect(abs(ratio - seconds) < 1e-9)
        }
    }

    @Test func theIdealIsTheFileAtTheMeanRateOverTheClientsOwnSpan() throws {
        // 20 s from 0: 80 Mbit offered, a mean of 4 Mbit/s; 5 MB at 4 Mbit/s is 10 s, half the span.
        let ideal = try #require(E2EIdeal.idealSeconds(bytes: 5_000_000, Self.onOff, offset: 0, seconds: 20))
        #expect(abs(ideal - 10) < 1e-9)
        #expect(abs(E2EIdeal.ratioToIdeal(bytes: 5_000_000, Self.onOff, offset: 0, seconds: 20) - 2) < 1e-9)
        // A client that ran only through the first 10 s met the full rate: its ideal is 5 s.
        let early = try #require(E2EIdeal.idealSeconds(bytes: 5_000_000, Self.onOff, offset: 0, seconds: 10))
        #expect(abs(early - 5) < 1e-9)
    }

    @Test func aClientThatStartedLateIsMeasuredFromItsOwnOffset() throws {
        // From 5 s to 15 s: 5 s at 8 Mbit/s, 5 s at 0: 40 Mbit, a mean of 4.
        let ideal = try #require(E2EIdeal.idealSeconds(bytes: 5_000_000, Self.onOff, offset: 5, seconds: 10))
        #expect(abs(ideal - 10) < 1e-9)
        // Inside the silent half the link offered nothing: no ideal, ratio 0.
        #expect(E2EIdeal.idealSeconds(bytes: 5_000_000, Self.onOff, offset: 10, seconds: 10) == nil)
        #expect(E2EIdeal.ratioToIdeal(bytes: 5_000_000, Self.onOff, offset: 10, seconds: 10) == 0)
    }

    @Test func theTracesStartOffsetShiftsTheSpanIntoTheTrace() throws {
        let fromTen = Self.direction(
            .trace(
                [.init(duration: 10, megabitsPerSecond: 8), .init(duration: 10, megabitsPerSecond: 0)],
                startingAt: 10))
        // Played from its 10th second: the silent half first.
        #expect(E2EIdeal.idealSeconds(bytes: 1_000_000, fromTen, offset: 0, seconds: 10) == nil)
        let ideal = try #require(E2EIdeal.idealSeconds(bytes: 5_000_000, fromTen, offset: 0, seconds: 20))
        #expect(abs(ideal - 10) < 1e-9)
        let carry = try #require(E2EIdeal.secondsToCarry(bytes: 5_000_000, fromTen, offset: 0))
        #expect(abs(carry - 15) < 1e-5)
    }

    @Test(arguments: [(5_000_000 as Int64, 5.0), (10_000_000, 10.0), (15_000_000, 25.0), (1_000_000, 1.0)])
    func theTimeToCarryAFileWalksTheTraceAndItsCycles(bytes: Int64, seconds: Double) throws {
        let carry = try #require(E2EIdeal.secondsToCarry(bytes: bytes, Self.onOff, offset: 0))
        #expect(abs(carry - seconds) < 1e-5)
    }

    @Test func aFileTheLinkCannotCarryWithinTheLimitHasNoTime() {
        #expect(E2EIdeal.secondsToCarry(bytes: 100_000_000, Self.onOff, offset: 0, limit: 30) == nil)
    }

    @Test func theSteadyLimitIsTheFileAtTheRateLessTheLoss() {
        // 128 MiB at 20 Mbit/s less 3%: 1073741824 bits / 19.4 Mbit/s.
        let limit = E2EIdeal.steadyLimit(bytes: 128 << 20, megabitsPerSecond: 20, lossRate: 0.03)
        #expect(abs(limit - 1_073_741_824 / 19.4e6) < 1e-9)
        #expect(abs(E2EIdeal.steadyLimit(bytes: 2_500_000, megabitsPerSecond: 20, lossRate: 0) - 1) < 1e-12)
    }

    @Test(arguments: [
        (0.0, 0.0), (19.9, 0.0), (20.0, 1.5), (21.0, 0.5), (21.5, 0.0), (39.0, 0.0), (40.3, 1.2), (61.49, 0.01),
    ])
    func aClientWaitsOutTheWindowOfAPathChangeBeforeTheClockRestarts(elapsed: Double, wait: Double) {
        let changes = LinkLabPathChanges(kind: .resetConnections, every: 20, window: 1.5)
        #expect(abs(E2ELabSession.windowRemaining(at: elapsed, changes) - wait) < 1e-9)
    }
}
