import AetherIO
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
        let parsed = try E2ELabOptions.parse(options, outOfSample: "/unused")
        #expect(
            parsed
                == E2ELabOptions(
                    tracePath: "/t/report_tram_0002.json", traceSHA256: nil, traceStart: 180, congestionControl: .bbr,
                    sizeMiB: 64, runs: 3))
    }

    @Test func withoutOptionsTheLabLinesRunTheOutOfSampleTramTraceFrom180SecondsUnderCubicOnce() throws {
        let parsed = try E2ELabOptions.parse([], outOfSample: "/x/Bench/OutOfSample")
        #expect(
            parsed
                == E2ELabOptions(
                    tracePath: "/x/Bench/OutOfSample/lte_belgium_ghent_tram/report_tram_0002.json",
                    traceSHA256: E2ELabOptions.defaultTraceSHA256, traceStart: 180, congestionControl: .cubic,
                    sizeMiB: 128, runs: 1))
        // A trace the command line names starts at its beginning, and its file is not checked against a digest.
        let named = try E2ELabOptions.parse(["--trace", "/t/x.json"], outOfSample: "/x")
        #expect(named.traceStart == 0 && named.traceSHA256 == nil)
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
        let error = try #require(throws: BenchError.self) { try E2ELabOptions.parse(options, outOfSample: "/x") }
        #expect(error.description.contains(options[0]) || options[0] == "--size-mib")
    }

    /// Another build's `aether` for the regression check: an executable is taken, anything else refused naming it.
    @Test func theComparedBuildMustBeAnExecutable() throws {
        let parsed = try E2ELabOptions.parse(["--compare-aether", "/bin/true"], outOfSample: "/x")
        #expect(parsed.comparedAether == "/bin/true")
        #expect(try E2ELabOptions.parse([], outOfSample: "/x").comparedAether == nil)
        let plain = FileManager.default.temporaryDirectory.appendingPathComponent("aether-not-executable-\(getpid())")
        #expect(
            FileManager.default.createFile(
                atPath: plain.path, contents: Data([1]), attributes: [.posixPermissions: 0o644]))
        defer { try? FileManager.default.removeItem(at: plain) }
        for path in [plain.path, "/nonexistent/aether", "/usr/bin"] {
            let error = try #require(throws: BenchError.self) {
                try E2ELabOptions.parse(["--compare-aether", path], outOfSample: "/x")
            }
            #expect(error.description.contains("--compare-aether \(path)"))
        }
        #expect(BenchArguments.usage(suites: []).contains("--compare-aether PATH"))
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

    /// Out of sample: no file of Traces/ (which the scheduler's tuning, its trained model and the tests read) has
    /// the default trace's name or its bytes.
    @Test func theDefaultTraceIsNoFileOfTraces() throws {
        let name = String(E2ELabOptions.defaultTrace.split(separator: "/")[1])
        let paths = try #require(FileManager.default.subpaths(atPath: Self.traces))
        var files = 0
        for path in paths {
            // A folder has no contents to read.
            guard let data = FileManager.default.contents(atPath: Self.traces + "/" + path) else { continue }
            files += 1
            #expect(!path.hasSuffix(name), "\(path)")
            #expect(SHA256.hash(Array(data)).hex != E2ELabOptions.defaultTraceSHA256, "\(path)")
        }
        #expect(files > 20)
    }

    @Test(
        .enabled(
            if: FileManager.default.fileExists(
                atPath: BenchOptions.projectOutOfSample + "/" + E2ELabOptions.defaultTrace),
            "the out-of-sample trace is placed as Bench/OutOfSample/SOURCES.md says"))
    func theDefaultTraceLoadsWithItsFamilyAndAStartPastItsEndIsAnError() throws {
        var options = try E2ELabOptions.parse([], outOfSample: BenchOptions.projectOutOfSample)
        let trace = try options.loadTrace()
        #expect(trace.family == "lte_belgium_ghent_tram")
        #expect(trace.name == "report_tram_0002.json")
        #expect(trace.samples.count == 659)
        options.traceStart = trace.duration
        let error = try #require(throws: BenchError.self) { try options.loadTrace() }
        #expect(error.description.contains("past the end"))
    }

    @Test func aMissingDefaultTraceNamesItsSourcesAndAnotherFileUnderItsNameIsRefused() throws {
        let directory = NSTemporaryDirectory() + "aether-oos-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let options = try E2ELabOptions.parse([], outOfSample: directory)
        let missing = try #require(throws: BenchError.self) { try options.loadTrace() }
        #expect(missing.description.contains("Bench/OutOfSample/SOURCES.md"))
        try FileManager.default.createDirectory(
            atPath: directory + "/lte_belgium_ghent_tram", withIntermediateDirectories: true)
        let slots = String(repeating: #"{"duration_ms": 1000, "bandwidth_kbps": 9000, "latency_ms": 20},"#, count: 300)
        try Data(("[" + slots.dropLast() + "]").utf8).write(to: URL(fileURLWithPath: options.tracePath))
        let other = try #require(throws: BenchError.self) { try options.loadTrace() }
        #expect(other.description.contains("SHA-256"))
        // The same file named with --trace is read: only the default is held to its digest.
        let named = try E2ELabOptions.parse(["--trace", options.tracePath], outOfSample: directory)
        #expect(try named.loadTrace().samples.count == 300)
    }

    @Test func anUnreadableTraceIsAnErrorNamingItsPath() throws {
        let options = try E2ELabOptions.parse(["--trace", "/nonexistent/family/trace.json"], outOfSample: "/x")
        let error = try #require(throws: BenchError.self) { try options.loadTrace() }
        #expect(error.description.contains("/nonexistent/family/trace.json"))
    }
}
