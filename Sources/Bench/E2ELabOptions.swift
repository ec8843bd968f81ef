import AetherLinkLab
import AetherScheduling

/// The options of `aether-bench e2e`'s link-lab lines (`lab-mobile`, `lab-steady`), parsed once before anything runs.
///
/// `--trace PATH` is any file `TraceLoader` reads (its family is the parent folder's name, which decides the
/// format for Traces/' own folders; a `.json` file is SABRE's format), played from `--trace-start SECONDS`;
/// `--cc` is the client namespace's congestion control; `--size-mib` the upload's size; `--runs` how many times
/// each Aether client runs (the median is reported; the baselines run once).
struct E2ELabOptions: Equatable {
    /// The trace of `lab-mobile` when `--trace` is absent: a held-out LTE trace of Traces/ (`TraceSplit`), the one
    /// the old `mobile` line replays, so the two lines compare.
    static let defaultTrace = "lte_belgium_ghent/report_bus_0003.json"
    /// The lab lines' upload size when `--size-mib` is absent.
    static let defaultSizeMiB = 128
    /// The Aether runs when `--runs` is absent.
    static let defaultRuns = 1

    /// The trace file's path.
    var tracePath: String
    /// Seconds into the trace at each client's start.
    var traceStart: Double
    /// The client namespace's congestion control (`lab-mobile`, and `lab-steady`'s main lines).
    var congestionControl: LinkLabCongestionControl
    /// The upload's size in MiB.
    var sizeMiB: Int
    /// Runs of each Aether client.
    var runs: Int

    /// The options of `options` (as `BenchArguments` passes them); `traces` is the directory of the default trace.
    static func parse(_ options: [String], traces: String) throws -> E2ELabOptions {
        let start = try E2EBench.option("--trace-start", in: options)
        let control = try E2EBench.option("--cc", in: options)
        let runs = try E2EBench.option("--runs", in: options)
        return E2ELabOptions(
            tracePath: try E2EBench.option("--trace", in: options) ?? traces + "/" + defaultTrace,
            traceStart: try start.map(seconds) ?? 0,
            congestionControl: try control.map(congestionControl) ?? .cubic,
            sizeMiB: try E2EBench.mebibytes(E2EBench.option("--size-mib", in: options), default: defaultSizeMiB),
            runs: try runs.map(runCount) ?? defaultRuns)
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

    /// The trace at `tracePath` (the first of its file), checked to reach past `traceStart`.
    func loadTrace() throws -> ThroughputTrace {
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
