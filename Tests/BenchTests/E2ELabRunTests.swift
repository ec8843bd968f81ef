import AetherLinkLab
import Testing

@testable import aether_bench

/// How a link-lab client's run reads: its counted time (the cap when it did not finish), the bytes on the wire
/// against the file, the ratios against a baseline (exact, or a bound when one side was capped), the median of
/// several runs, and the congestion controls read from `ss`.
@Suite struct E2ELabRunTests {
    static func run(
        seconds: Double, stopped: Bool = false, failed: Int32? = nil, wire: Int64 = 1_100_000, cap: Double = 400
    ) -> E2ELabRun {
        var counters = LinkLabCounters()
        counters.uplink.deliveredTCPPayloadBytes = wire
        return E2ELabRun(
            client: "c", finish: ClientFinish(seconds: seconds, stopped: stopped, failedStatus: failed), offset: 0,
            counters: counters, congestion: "cubic x3", bytes: 1_000_000, cap: cap)
    }

    @Test func aFinishedRunCountsItsTimeAndItsResentShare() {
        let run = Self.run(seconds: 60)
        #expect(run.countedSeconds == 60)
        #expect(abs(run.resentShare - 0.1) < 1e-12)
        #expect(run.outcome == "60.00 s")
        #expect(run.wire.hasSuffix("(re-sent 10.0%)"))
    }

    @Test func aCappedOrFailedRunCountsAsTheCapAndIsNotDelivered() {
        let capped = Self.run(seconds: 400, stopped: true, wire: 300_000)
        #expect(capped.countedSeconds == 400)
        #expect(capped.outcome == "capped at 400.00 s")
        #expect(capped.countedTime == ">=400.00 s")
        #expect(Self.run(seconds: 60).countedTime == "60.00 s")
        #expect(capped.wire.hasSuffix("(not delivered)"))
        let failed = Self.run(seconds: 12, failed: 1)
        #expect(failed.countedSeconds == 400)
        #expect(failed.outcome == "gave up (exit 1) after 12.00 s")
    }

    @Test func timeRatiosAreExactWhenBothFinishedAndBoundsWhenOneWasCapped() {
        let fast = Self.run(seconds: 50)
        let slow = Self.run(seconds: 100)
        let capped = Self.run(seconds: 400, stopped: true)
        let failed = Self.run(seconds: 10, failed: 1)
        #expect(E2ELabRun.timeRatio(fast, slow).value == 0.5)
        #expect(E2ELabRun.timeRatio(fast, slow).text == "0.50")
        #expect(E2ELabRun.timeRatio(fast, capped).text == "<=0.13")
        #expect(E2ELabRun.timeRatio(capped, slow).text == ">=4.00")
        #expect(E2ELabRun.timeRatio(capped, capped).text == "n/a(neither delivered)")
        // A client that gave up never delivers: its time to deliver is past the cap too.
        #expect(E2ELabRun.timeRatio(fast, failed).text == "<=0.13")
        #expect(E2ELabRun.timeRatio(failed, slow).text == ">=4.00")
        #expect(E2ELabRun.timeRatio(failed, capped).text == "n/a(neither delivered)")
        #expect(E2ELabRun.timeRatio(fast, capped).value == nil)
    }

    @Test func aYardstickRatioIsALowerBoundForACappedRun() {
        #expect(E2ELabRun.yardstickRatio(Self.run(seconds: 60), ratio: 1.234) == "1.23")
        #expect(E2ELabRun.yardstickRatio(Self.run(seconds: 400, stopped: true), ratio: 4.01) == ">=4.01")
        #expect(E2ELabRun.yardstickRatio(Self.run(seconds: 3, failed: 2), ratio: 0.1) == "n/a (gave up)")
    }

    @Test func theMedianRunIsTheMiddleByCountedTimeWithCappedRunsLast() throws {
        let runs = [Self.run(seconds: 90), Self.run(seconds: 400, stopped: true), Self.run(seconds: 60)]
        #expect(try #require(E2ELabRun.median(runs)).countedSeconds == 90)
        let mostlyCapped = [
            Self.run(seconds: 400, stopped: true), Self.run(seconds: 10, failed: 1), Self.run(seconds: 70),
        ]
        let median = try #require(E2ELabRun.median(mostlyCapped))
        #expect(!median.finish.finished)
        #expect(E2ELabRun.median([]) == nil)
    }

    @Test func theControlOfEachConnectionIsReadFromItsInfoLine() {
        let listing = """
            State Recv-Q Send-Q Local Address:Port  Peer Address:Port Process
            ESTAB 0      1448       10.77.0.1:45931    10.77.0.2:8080
            \t ts sack cubic wscale:7,7 rto:284 rtt:80.5/0.2 mss:1448 cwnd:10 bytes_sent:362
            ESTAB 0      0          10.77.0.1:46239    10.77.0.2:8080
            \t bbr wscale:10,10 rto:208 rtt:81.2/1.1 bbr:(bw:17476265bps,mrtt:80.1,pacing_gain:2.88672) send 1bps
            ESTAB 0      0          10.77.0.1:46240    10.77.0.2:8081
            \t sack reno wscale:7,7 rto:300 cwnd:4 ssthresh:2

            """
        #expect(
            CongestionSampler.controls(inSocketListing: listing, known: ["reno", "cubic", "bbr"])
                == ["cubic", "bbr", "reno"])
        // A control the kernel does not offer is not read into a word that merely looks like one.
        #expect(CongestionSampler.controls(inSocketListing: listing, known: ["vegas"]).isEmpty)
        #expect(CongestionSampler.controls(inSocketListing: "State Recv-Q\n", known: ["cubic"]).isEmpty)
    }
}
