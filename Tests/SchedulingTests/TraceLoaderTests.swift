import AetherIO
import Testing

@testable import AetherScheduling

/// The project's copy of the throughput traces, `Traces/` at the repository root (sources and checksums in
/// `Traces/SOURCES.md`), located from this file so the suite runs in any clone, from any directory.
enum ProjectTraces {
    static let directory: String =
        "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/Traces"
}

/// Loads one real file of every trace family from `Traces/`. Never skipped: a clone without the traces fails here.
@Suite struct TraceLoaderTests {
    static var directory: String { ProjectTraces.directory }

    static func load(_ family: String, _ file: String) throws -> [ThroughputTrace] {
        try TraceLoader.load(path: directory + "/" + family + "/" + file, family: family)
    }

    @Test func theProjectCopyMatchesEveryChecksumOfItsSources() throws {
        let sources = try #require(SystemCalls.readFile(Self.directory + "/SOURCES.md"), "Traces/SOURCES.md is missing")
        // The table at the end of SOURCES.md: "    <sha256>  ./<family>/<file>".
        let rows = String(decoding: sources, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count == 2 && fields[0].count == 64 && fields[1].hasPrefix("./")
                ? (String(fields[0]), String(fields[1].dropFirst(2))) : nil
        }
        #expect(rows.count == 28)
        for (digest, file) in rows {
            let bytes = try #require(SystemCalls.readFile(Self.directory + "/" + file, limit: 16 << 20), "\(file)")
            #expect(SHA256.hash(bytes).hex == digest, "\(file)")
        }
    }

    @Test func pensieveCookedTextHasEveryLine() throws {
        let traces = try Self.load("hsdpa_norway_3g", "norway_bus_1")
        #expect(traces.count == 1)
        let samples = traces[0].samples
        #expect(samples.count == 266)
        #expect(samples[0].start == 0 && abs(samples[0].megabitsPerSecond - 4.03768755221) < 1e-12)
        #expect(abs(samples[1].start - 0.549999952316) < 1e-12)
        #expect(abs(samples[0].duration - 0.549999952316) < 1e-12)
        #expect(abs(samples[265].megabitsPerSecond - 1.85123847695) < 1e-12)
    }

    @Test func sabreJSONHasEverySlot() throws {
        let traces = try Self.load("lte_belgium_ghent", "report_bus_0003.json")
        #expect(traces[0].samples.count == 758)
        #expect(traces[0].samples[0].duration == 0.431)
        #expect(traces[0].samples[0].megabitsPerSecond == 31.869)
        #expect(abs(traces[0].duration - 762.668) < 1e-9)
    }

    @Test func lumosTextHasOneSamplePerSecond() throws {
        let lte = try Self.load("lte_lumos5g_minneapolis", "4g_trace_driving_50015_dr")
        #expect(lte[0].samples.count == 250)
        #expect(lte[0].samples[0].megabitsPerSecond == 45)
        let nr = try Self.load("nr5g_lumos5g_minneapolis", "5g_trace_1_driving")
        #expect(nr[0].samples.count == 230)
        #expect(nr[0].samples[0].megabitsPerSecond == 78 && nr[0].samples[0].start == 0)
        #expect(nr[0].samples.allSatisfy { $0.duration == 1 })
    }

    @Test func npyGroundTruthIsATraceAndPredictionsAreNot() throws {
        let truth = try Self.load("nr5g_throughput_prediction", "y_true_1_drive.npy")
        #expect(truth.count == 1 && truth[0].samples.count == 130)
        #expect(try Self.load("nr5g_throughput_prediction", "y_pred_hm_1_drive.npy").isEmpty)
        let references = try TraceLoader.referencePredictions(
            directory: Self.directory + "/nr5g_throughput_prediction", trueFile: "y_true_20_walk.npy")
        #expect(references.map(\.0) == ["hm", "GDBT"])
        #expect(references.allSatisfy { $0.1.count == 465 })
    }

    @Test func gophersCSVSplitsIntoRuns() throws {
        let traces = try Self.load("nr5g_5gophers", "throughput_data.csv")
        #expect(traces.count == 120)
        #expect(traces.reduce(0) { $0 + $1.samples.count } == 7257)
        #expect(traces[0].name == "TCP-SPRINT-1-US-East-1")
        #expect(abs(traces[0].samples[0].megabitsPerSecond - 0.9312768299517644) < 1e-12)
    }

    @Test func loadAllReadsEveryFamily() throws {
        let traces = try TraceLoader.loadAll(directory: Self.directory)
        #expect(Set(traces.map(\.family)).count == 6)
        #expect(traces.count == 6 + 5 + 4 + 6 + 2 + 120)
    }
}

@Suite struct TraceParserTests {
    @Test func malformedLinesAreErrorsWithTheirLineNumber() {
        #expect(throws: SchedulingError.self) {
            try TraceLoader.parseTimeSeries("0 1.5\n1 fast\n", family: "f", name: "n", path: "p")
        }
        #expect(throws: SchedulingError.self) { try TraceLoader.parseTimeSeries("", family: "f", name: "n", path: "p") }
        #expect(throws: SchedulingError.self) {
            try TraceLoader.parseSabre(
                "[{\"duration_ms\": 0, \"bandwidth_kbps\": 5}]", family: "f", name: "n", path: "p")
        }
        #expect(throws: SchedulingError.self) {
            try TraceLoader.parseGophers("seq_num,throughput_mbps\n1,2,3\n", family: "f", path: "p")
        }
    }

    // Found by the `trace` fuzz target: `Double("inf")` parses, so a SABRE slot of infinite duration (or
    // time-series times whose difference overflows) loaded as a sample outside Sample's documented ranges.
    @Test func infiniteDurationsAndRatesAreRejected() {
        for body in [
            #"[{"duration_ms": inf, "bandwidth_kbps": 5000}]"#, #"[{"duration_ms": 1000, "bandwidth_kbps": inf}]"#,
        ] {
            #expect(throws: SchedulingError.self) {
                try TraceLoader.parseSabre(body, family: "f", name: "n", path: "p")
            }
        }
        for text in ["-1e308 1\n1e308 1\n", "1e308 1\n-1e308 1\n"] {
            #expect(throws: SchedulingError.self) {
                try TraceLoader.parseTimeSeries(text, family: "f", name: "n", path: "p")
            }
        }
    }

    @Test func npyRejectsBadMagicTruncationAndShapeMismatch() throws {
        #expect(throws: SchedulingError.self) { try TraceLoader.parseNpy([1, 2, 3], path: "p") }
        let header = Array("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n".utf8)
        let prefix: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0, UInt8(header.count), 0]
        let one = Array(repeating: UInt8(0), count: 8)
        #expect(throws: SchedulingError.self) { try TraceLoader.parseNpy(prefix + header + one, path: "p") }
        #expect(throws: SchedulingError.self) { try TraceLoader.parseNpy(prefix + header + one + [0], path: "p") }
        // The well-formed file decodes to its two values, little-endian: 1.5 (0x3FF8...) and -2.25 (0xC002...).
        let values: [UInt8] = [0, 0, 0, 0, 0, 0, 0xF8, 0x3F] + [0, 0, 0, 0, 0, 0, 0x02, 0xC0]
        #expect(try TraceLoader.parseNpy(prefix + header + values, path: "p") == [1.5, -2.25])
        // The same bytes as int64: 0x3FF8_0000_0000_0000 and 0xC002_0000_0000_0000 as signed integers.
        let intHeader = Array("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n".utf8)
        let intPrefix: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0, UInt8(intHeader.count), 0]
        #expect(
            try TraceLoader.parseNpy(intPrefix + intHeader + values, path: "p")
                == [Double(0x3FF8_0000_0000_0000 as Int64), Double(Int64(bitPattern: 0xC002_0000_0000_0000))])
    }
}
