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

    @Test func theBusTraceTheBenchReplaysIsReadWhole() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let trace = try LinkTrace(path: root.path + "/Traces/" + E2EBench.trace)
        let slots = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: root.appendingPathComponent("Traces/" + E2EBench.trace))) as? [[String: Any]])
        #expect(trace.rates.count == slots.count)
        #expect(trace.rates.count == 758)
        #expect(trace.meanMbit > 19.5 && trace.meanMbit < 19.9)
        #expect(trace.name == "report_bus_0003.json")
    }

    @Test(arguments: ["{}", "[]", "not json", #"[{"duration_ms": 1000}]"#])
    func aFileThatIsNotATraceIsAnErrorNamingIt(text: String) throws {
        let path = NSTemporaryDirectory() + "aether-trace-\(UUID().uuidString).json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(throws: BenchError.self) { try LinkTrace(path: path) }
        #expect(error.description.contains(path))
    }

    @Test func aMissingTraceIsAnErrorThatSaysHowToNameTheDirectory() throws {
        let error = try #require(throws: BenchError.self) { try LinkTrace(path: "/nonexistent/trace.json") }
        #expect(error.description.contains("--traces"))
    }
}
