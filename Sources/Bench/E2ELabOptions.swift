import AetherIO
import AetherLinkLab
import AetherScheduling
import Foundation

/// The options of `aether-bench e2e`'s link-lab lines (`lab-mobile`, `lab-steady`), parsed once before anything runs.
///
/// `--trace PATH` is any file `TraceLoader` reads (its family is the parent folder's name, which decides the
/// format for Traces/' own folders; a `.json` file is SABRE's format), played from `--trace-start SECONDS`;
/// `--cc` is the client namespace's congestion control; `--size-mib` the upload's size; `--runs` how many times
/// each Aether client runs (the median is reported; the baselines run once).
struct E2ELabOptions: Equatable {
    /// The trace of `lab-mobile` and of the old `mobile` line when `--trace` is absent: an LTE trace of a tram in
    /// Ghent that is not in Traces/, so no tuning or test of the project saw it (Bench/OutOfSample/SOURCES.md).
    static let defaultTrace = "lte_belgium_ghent_tram/report_tram_0002.json"
    /// Where the default trace is played from: 62 s there carry 128 MiB at 17.2 Mbit/s, through dips to 4 Mbit/s and
    /// a 3 s outage (issue 25's run).
    static let defaultTraceStart = 180.0
    /// The default trace's SHA-256, as its SOURCES.md gives it: another file under its name is refused.
    static let defaultTraceSHA256 = "3e13cdae3c3f0ecc30cb8629f753c34e012a1097ff74ab42dec63db1a751d19c"
    /// The lab lines' upload size when `--size-mib` is absent.
    static let defaultSizeMiB = 128
    /// The Aether runs when `--runs` is absent.
    static let defaultRuns = 1

    /// The trace file's path.
    var tracePath: String
    /// The SHA-256 the trace file must have (the default trace's), nil for a trace `--trace` names.
    var traceSHA256: String?
    /// Seconds into the trace at each client's start.
    var traceStart: Double
    /// The client namespace's congestion control (`lab-mobile`, and `lab-steady`'s main lines).
    var congestionControl: LinkLabCongestionControl
    /// The upload's size in MiB.
    var sizeMiB: Int
    /// Runs of each Aether client.
    var runs: Int
    /// Whether the baselines (tuspy, boto3, awscli) run beside Aether's clients (`--no-baselines`: not).
    var baselines = true
    /// Another build's `aether`, run as a client beside this one's in `lab-mobile` (`--compare-aether`).
    var comparedAether: String? = nil

    /// The options of `options` (as `BenchArguments` passes them); `outOfSample` is the directory of the default
    /// trace (Bench/OutOfSample). Without `--trace` the start defaults to the default trace's; with it, to 0.
    static func parse(_ options: [String], outOfSample: String) throws -> E2ELabOptions {
        let start = try E2EBench.option("--trace-start", in: options)
        let control = try E2EBench.option("--cc", in: options)
        let runs = try E2EBench.option("--runs", in: options)
        let named = try E2EBench.option("--trace", in: options)
        let compared = try E2EBench.option("--compare-aether", in: options)
        try comparedBuild(compared)
        return E2ELabOptions(
            tracePath: named ?? outOfSample + "/" + defaultTrace,
            traceSHA256: named == nil ? defaultTraceSHA256 : nil,
            traceStart: try start.map(seconds) ?? (named == nil ? defaultTraceStart : 0),
            congestionControl: try control.map(congestionControl) ?? .cubic,
            sizeMiB: try E2EBench.mebibytes(E2EBench.option("--size-mib", in: options), default: defaultSizeMiB),
            runs: try runs.map(runCount) ?? defaultRuns, baselines: !options.contains("--no-baselines"),
            comparedAether: compared)
    }

    /// Checks `--compare-aether`'s path names an executable regular file (a directory passes `access(X_OK)`).
    static func comparedBuild(_ path: String?) throws {
        guard let path else { return }
        var info = stat()
        guard unsafe stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, unsafe access(path, X_OK) == 0 else {
            throw BenchError("--compare-aether \(path) is not an executable file")
        }
    }

    /// A start offset: a finite number of seconds, at least 0.
    static func seconds(_ text: String) throws -> Double {
        guard let value = Double(text), value.isFinite, value >= 0, value <= 1e6 else {
            throw BenchError("--trace-start takes seconds into the trace (0...1000000), not \(text)")
        }
        return value
    }

    /// A congestion control the lab can make the client namespace's default.
    static func congestionControl(_ text: String) throws -> LinkLabCongestionControl {
        guard let control = LinkLabCongestionControl(rawValue: text) else {
            let names = LinkLabCongestionControl.allCases.map(\.rawValue).joined(separator: "|")
            throw BenchError("--cc takes \(names), not \(text)")
        }
        return control
    }

    /// A run count, 1...21.
    static func runCount(_ text: String) throws -> Int {
        guard let value = Int(text), (1...21).contains(value) else {
            throw BenchError("--runs takes a whole number of runs (1...21), not \(text)")
        }
        return value
    }

    /// The trace at `tracePath` (the first of its file), checked to reach past `traceStart` and, for the default
    /// trace, to be the file its SOURCES.md names.
    func loadTrace() throws -> ThroughputTrace {
        if let expected = traceSHA256 {
            guard let data = FileManager.default.contents(atPath: tracePath) else {
                throw BenchError(
                    "the out-of-sample trace \(tracePath) is missing: Bench/OutOfSample/SOURCES.md says where it comes "
                        + "from (or name another with --trace PATH)")
            }
            let digest = SHA256.hash(Array(data)).hex
            guard digest == expected else {
                throw BenchError(
                    "\(tracePath) has SHA-256 \(digest), not the \(expected) of Bench/OutOfSample/SOURCES.md")
            }
        }
        let parts = tracePath.split(separator: "/")
        let family = parts.count >= 2 ? String(parts[parts.count - 2]) : ""
        let trace: ThroughputTrace
        do {
            guard let first = try TraceLoader.load(path: tracePath, family: family).first else {
                throw BenchError("\(tracePath) holds no throughput trace (--trace names a trace file)")
            }
            trace = first
        } catch let error as SchedulingError {
            throw BenchError("cannot read the trace \(tracePath): \(error) (--trace names a trace file)")
        }
        guard traceStart < trace.duration else {
            throw BenchError(
                "--trace-start \(traceStart) s is past the end of \(tracePath) (\(trace.duration) s)")
        }
        return trace
    }
}
