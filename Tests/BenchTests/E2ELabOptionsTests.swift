import AetherLinkLab
import AetherScheduling
import Foundation
import Testing

@testable import aether_bench

/// The options of `aether-bench e2e`'s link-lab lines: `--trace`, `--trace-start`, `--cc`, `--size-mib`, `--runs`,
/// `--lines`, and the default trace being one the project's tuning never saw.
@Suite struct E2ELabOptionsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let traces = root + "/Traces"

    @Test func theLabOptionsParseThroughTheCommandLineWithTheirValues() throws {
        let arguments = [
            "e2e", "--lines", "lab-mobile,lab-steady", "--trace", "/t/report_tram_0002.json", "--trace-start", "180",
            "--cc", "bbr", "--size-mib", "64", "--runs", "3",
        ]
        let request = try BenchArguments.parse(arguments, known: ["e2e"])
        guard case .run(let suites, let options) = request else {
            Issue.record("not a run: \(request)")
            return
        }
        #expect(suites == ["e2e"])
        #expect(try E2EBench.lines(E2EBench.option("--lines", in: options)) == ["lab-mobile", "lab-steady"])
        let parsed = try E2ELabOptions.parse(options, traces: "/unused")
        #expect(
            parsed
                == E2ELabOptions(
                    tracePath: "/t/report_tram_0002.json", traceStart: 180, congestionControl: .bbr, sizeMiB: 64,
                    runs: 3))
    }

    @Test func withoutOptionsTheLabLinesRunTheHeldOutBusTraceFromItsStartUnderCubicOnce() throws {
        let parsed = try E2ELabOptions.parse([], traces: "/x/Traces")
        #expect(
            parsed
                == E2ELabOptions(
                    tracePath: "/x/Traces/lte_belgium_ghent/report_bus_0003.json", traceStart: 0,
                    congestionControl: .cubic, sizeMiB: 128, runs: 1))
    }

    @Test(arguments: [
        ["e2e", "--trace"], ["e2e", "--trace-start"], ["e2e", "--cc"], ["e2e", "--cc", "--runs", "2"],
    ])
    func aLabOptionWithoutItsValueIsAUsageError(arguments: [String]) {
        #expect(throws: BenchArguments.UsageError.self) { try BenchArguments.parse(arguments, known: ["e2e"]) }
    }

    @Test(arguments: [
        ["--trace-start", "x"], ["--trace-start", "nan"], ["--trace-start", "inf"], ["--trace-start", "1e7"],
        ["--cc", "vegas"], ["--cc", "CUBIC"], ["--runs", "0"], ["--runs", "22"], ["--runs", "two"],
        ["--size-mib", "0"],
    ])
    func aLabOptionOutOfRangeIsAnErrorNamingIt(options: [String]) throws {
        let error = try #require(throws: BenchError.self) { try E2ELabOptions.parse(options, traces: "/x") }
        #expect(error.description.contains(options[0]) || options[0] == "--size-mib")
    }

    @Test(arguments: [("0", 0.0), ("180", 180), ("12.5", 12.5)])
    func aTraceStartIsSecondsIntoTheTrace(text: String, value: Double) throws {
        #expect(try E2ELabOptions.seconds(text) == value)
    }

    @Test func theUsageNamesTheLabLinesAndTheirOptions() {
        let usage = BenchArguments.usage(suites: [("e2e", false, E2EBench.summary)])
        for word in ["--trace PATH", "--trace-start S", "--cc NAME", "lab-mobile,lab-steady", "awscli"] {
            #expect(usage.contains(word), "\(word)")
        }
    }

    @Test func theLinesOptionNamesTheLabLinesBesideTheOldOnes() throws {
        #expect(try E2EBench.lines("mobile,lab-mobile") == ["mobile", "lab-mobile"])
        #expect(throws: BenchError.self) { try E2EBench.lines("lab") }
    }

    /// The split is within a family, so the family's own files decide it.
    @Test func theDefaultTraceIsAnLTETraceTheSplitHoldsOut() throws {
        let family = String(E2ELabOptions.defaultTrace.split(separator: "/")[0])
        let folder = Self.traces + "/" + family
        let files = try FileManager.default.contentsOfDirectory(atPath: folder)
        let traces = try files.flatMap { try TraceLoader.load(path: folder + "/" + $0, family: family) }
        #expect(traces.count == 5)
        let name = String(E2ELabOptions.defaultTrace.split(separator: "/")[1])
        let assigned = try #require(TraceSplit.assign(traces).first { $0.trace.name == name })
        #expect(assigned.heldOut)
        #expect(TraceSplit.generation(ofFamily: family) == .lte)
    }

    @Test func theDefaultTraceLoadsWithItsFamilyAndAStartPastItsEndIsAnError() throws {
        var options = try E2ELabOptions.parse([], traces: Self.traces)
        let trace = try options.loadTrace()
        #expect(trace.family == "lte_belgium_ghent")
        #expect(trace.name == "report_bus_0003.json")
        #expect(trace.samples.count == 758)
        options.traceStart = trace.duration
        let error = try #require(throws: BenchError.self) { try options.loadTrace() }
        #expect(error.description.contains("past the end"))
    }

    @Test func anUnreadableTraceIsAnErrorNamingItsPath() throws {
        let options = try E2ELabOptions.parse(["--trace", "/nonexistent/family/trace.json"], traces: "/x")
        let error = try #require(throws: BenchError.self) { try options.loadTrace() }
        #expect(error.description.contains("/nonexistent/family/trace.json"))
    }
}
