/// The command line of `aether-bench`: suite names and options, in any order.
///
/// `-h`/`--help` asks for the usage (exit 0, in any build); an unknown suite, an unknown option or an option
/// without its value is a usage error (exit 2). Nothing runs unless the whole line parses.
enum BenchArguments {
    /// What the command line asks for.
    enum Request: Equatable {
        /// Print the usage and exit 0.
        case help
        /// Run these suites (every default suite when empty) with these options, as `--name [value]` strings.
        case run(suites: [String], options: [String])
    }

    /// A command line that does not parse; exit 2.
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// Options that take a value (`--traces DIR`, `--size-mib N`).
    static let valueOptions: Set<String> = [
        "--traces", "--size-mib", "--runs", "--chunk-size", "--parallel", "--link-mib", "--lines", "--trace",
        "--trace-start", "--cc", "--compare-aether", "--files", "--size-kib", "--parallel-files",
    ]
    /// Options that stand alone.
    static let flagOptions: Set<String> = ["--print-sink", "--train", "--keep-logs", "--no-baselines"]

    /// Parses `arguments` (without the program name) against the suites named `known`.
    static func parse(_ arguments: [String], known: [String]) throws(UsageError) -> Request {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) { return .help }
        var suites: [String] = []
        var options: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if valueOptions.contains(argument) {
                guard index < arguments.count, !arguments[index].hasPrefix("-") else {
                    throw UsageError(description: "option \(argument) needs a value")
                }
                options += [argument, arguments[index]]
                index += 1
            } else if flagOptions.contains(argument) {
                options.append(argument)
            } else if argument.hasPrefix("-") {
                throw UsageError(description: "unknown option \(argument)")
            } else if known.contains(argument) {
                if !suites.contains(argument) { suites.append(argument) }
            } else {
                throw UsageError(description: "unknown suite \(argument); known: \(known.joined(separator: ", "))")
            }
        }
        return .run(suites: suites, options: options)
    }

    /// The usage text; `suites` are (name, runs by default, one-line summary).
    static func usage(suites: [(name: String, runsByDefault: Bool, summary: String)]) -> String {
        let width = suites.map(\.name.count).max() ?? 0
        var lines = [
            "usage: aether-bench [SUITE ...] [--traces DIR] [--print-sink] [--size-mib N] [--runs N] [--train]",
            "       [--chunk-size N] [--parallel N] [--link-mib N] [--lines LIST] [--trace PATH] [--trace-start S]",
            "       [--cc cubic|bbr|reno] [--keep-logs] [--no-baselines] [--compare-aether PATH]",
            "       [--files N] [--size-kib N] [--parallel-files N]",
            "       swift run -c release aether-bench [SUITE ...]   (release builds only)",
            "",
            "Prints the median of several runs of each benchmark and a ratio against a baseline measured in the same run.",
            "",
            "suites (a bare `aether-bench` runs those marked *):",
        ]
        for suite in suites {
            let padding = String(repeating: " ", count: width - suite.name.count)
            lines.append("  \(suite.name)\(padding) \(suite.runsByDefault ? "*" : " ")  \(suite.summary)")
        }
        lines += [
            "",
            "options:",
            "  --traces DIR   trace directory of predict and schedule (default: the project's Traces/)",
            "  --print-sink   integrity: print the value that keeps the optimiser from removing the work",
            "  --size-mib N   transport, receiver, fleet: the upload's size in MiB (default 1024); e2e: the s3 line's size",
            "                 (default 1024) and the lab lines' (default 128)",
            "  --runs N       receiver: timed runs of each side, alternating (default 3); fleet: of the 1 GiB line (3);",
            "                 e2e: of the s3 line (3) and of each Aether client of the lab lines, median reported",
            "                 (1; baselines once)",
            "  --chunk-size N, --parallel N  receiver: passed to `aether upload` (default: its scheduler decides)",
            "  --link-mib N   e2e: the bad link's upload size in MiB (default 64); the mobile link's is twice it",
            "  --lines LIST   e2e: which lines, comma-separated: s3,badlink,mobile,lab-mobile,lab-steady,lab-transport,",
            "                 lab-capture",
            "                 (default all);",
            "                 lab: ping,tcp,udp,lte,cost",
            "  --trace PATH   e2e lab-mobile and mobile: the uplink's trace, any file of a Traces/ format (SABRE .json,",
            "                 time series, .npy); default Bench/OutOfSample/lte_belgium_ghent_tram/report_tram_0002.json",
            "                 (out of sample: not in Traces/; Bench/OutOfSample/SOURCES.md)",
            "  --trace-start S  e2e lab-mobile and mobile: seconds into the trace where each client starts (default 180",
            "                 for the default trace, else 0)",
            "  --keep-logs    e2e: keep every client's and server's log (--json events, --trace lines, the receiver's",
            "                 request log)",
            "  --no-baselines e2e lab lines: run Aether's clients only (no tuspy, boto3, awscli; no ratios to them);",
            "                 captures: the native line only (no RGW, aws s3 sync, rclone)",
            "  --cc NAME      e2e lab lines: the client namespace's congestion control, cubic, bbr or reno (default cubic)",
            "  --compare-aether PATH  receiver, e2e lab-mobile: another build's `aether` (an older commit's release",
            "                 build) measured in the same run beside this one, its ratio printed (a regression check)",
            "  --files N, --size-kib N  captures: the folder's files and their size (default 2000 of 4 KiB)",
            "  --parallel-files N  captures: `aether upload DIR --files N` (default 16)",
            "  --train        predict: fit the fused predictor's model on the training traces, print its Swift source",
            "  -h, --help     print this usage and exit",
            "",
            "e2e needs root for its badlink and mobile lines (the old emulation: a network namespace, veth, tc htb,",
            "nftables loss and resets, all created and removed by the bench) and its lab-mobile, lab-steady,",
            "lab-transport and lab-capture lines",
            "(the link lab, 80 ms RTT, docs/LINK-LAB.md); without root it runs the s3 line and says it skipped the",
            "others. It runs the release `aether` built beside aether-bench, the Python peers of .venv",
            "(scripts/setup-venv.sh) and Debian's awscli.",
            "",
            "lab needs root too: it builds the link lab (AetherLinkLab: a TUN delay line between two network",
            "namespaces, docs/LINK-LAB.md) and prints its calibration (ping, iperf3 TCP by loss and congestion control,",
            "UDP loss, an LTE trace from --traces DIR, the relay's CPU and lateness) beside the expected values.",
            "",
            "fleet starts PostgreSQL (Debian's postgresql, as the postgres user) for fleet_catalog_postgres_64 (vs",
            "fleet_catalog_sqlite_64) and moto from .venv for fleet_native (aether serve --catalog --blobs s3:// vs",
            "--dir); a line whose server is missing is skipped with the reason.",
        ]
        return lines.joined(separator: "\n")
    }
}
