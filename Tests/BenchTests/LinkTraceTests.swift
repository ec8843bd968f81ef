import AetherScheduling
import Foundation
import Testing

@testable import aether_bench

/// The LTE trace replay of `aether-bench e2e`'s mobile line: reset windows, the share of each second they leave,
/// and the link's limit that decides when a slow client is stopped.
@Suite struct LinkTraceTests {
    /// 8 Mbit/s: one megabyte a second.
    static let constant = LinkTrace(name: "constant", rates: [8])

    @Test(arguments: [
        (0.0, false), (1.0, false), (19.99, false), (20.0, true), (21.49, true), (21.5, false), (39.9, false),
        (40.2, true), (61.4, true), (61.6, false),
    ])
    func connectionsAreResetForOneAndAHalfSecondsEveryTwentySecondsFromTheTwentieth(time: Double, resetting: Bool) {
        #expect(Self.constant.resetting(at: time) == resetting)
    }

    @Test(arguments: [(0, 1.0), (19, 1.0), (20, 0.0), (21, 0.5), (22, 1.0), (40, 0.0), (41, 0.5), (59, 1.0)])
    func eachSecondKeepsTheShareTheResetWindowsLeaveOpen(second: Int, share: Double) {
        #expect(Self.constant.openShare(of: second) == share)
    }

    @Test(arguments: [
        (5_000_000 as Int64, 5.0), (19_500_000, 19.5), (20_000_000, 20.0), (20_500_000, 22.0), (30_000_000, 31.5),
    ])
    func theLimitIsTheTimeTheTraceNeedsToCarryTheBytesWithNothingCarriedDuringResets(bytes: Int64, seconds: Double) {
        #expect(abs(Self.constant.limit(bytes: bytes) - seconds) < 1e-9)
    }

    @Test func theRateOfEachSecondFollowsTheTraceAndRepeatsItAndZeroIsFlooredAtWhatHtbTakes() {
        let trace = LinkTrace(name: "t", rates: [0, 10, 30])
        #expect(trace.rates == [0.064, 10, 30])
        #expect(trace.rate(at: 1) == 10)
        #expect(trace.rate(at: 5) == 30)
        #expect(abs(trace.meanMbit - 40.064 / 3) < 1e-12)
        // A slow second stretches the limit: 1.25 MB at 0.064, then 10 Mbit/s (1.25 MB/s).
        #expect(abs(trace.limit(bytes: 8_000 + 1_250_000) - 2.0) < 1e-9)
    }

    @Test func aTraceIsReplayedFromItsStartOffsetAsTheMeanOfEachSecondOverOneCycle() {
        // 2 s at 10 Mbit/s, 0.5 s at 0, 1.5 s at 30: from 1.5 s in, the seconds start at 1.5, 2.5, 3.5 and 4.5.
        let trace = ThroughputTrace(
            family: "f", name: "t",
            samples: [
                .init(start: 0, duration: 2, megabitsPerSecond: 10),
                .init(start: 2, duration: 0.5, megabitsPerSecond: 0),
                .init(start: 2.5, duration: 1.5, megabitsPerSecond: 30),
            ])
        let replay = LinkTrace(trace, startingAt: 1.5)
        #expect(replay.name == "t from 1.5 s")
        let expected = [5.0, 30, 20, 10]
        #expect(replay.rates.count == 4)
        for (rate, want) in zip(replay.rates, expected) { #expect(abs(rate - want) < 1e-6, "\(replay.rates)") }
        #expect(LinkTrace(trace, startingAt: 0).name == "t")
    }

    @Test(
        .enabled(
            if: FileManager.default.fileExists(
                atPath: BenchOptions.projectOutOfSample + "/" + E2ELabOptions.defaultTrace),
            "the out-of-sample trace is placed as Bench/OutOfSample/SOURCES.md says"))
    func theDefaultOutOfSampleTraceFromItsStartIsTheTramOfIssue25() throws {
        let options = try E2ELabOptions.parse([], outOfSample: BenchOptions.projectOutOfSample)
        let replay = LinkTrace(try options.loadTrace(), startingAt: options.traceStart)
        // 128 MiB at 17.2 Mbit/s over 62.4 s, through the 3 s outage 24.2 s in (Bench/OutOfSample/SOURCES.md).
        let limit = replay.limit(bytes: 128 << 20)
        #expect(limit > 62.4 && limit < 72, "\(limit) s: the three reset windows add what they cut")
        #expect(replay.rates[25] < 0.1 && replay.rates[26] < 0.1)
    }
}
