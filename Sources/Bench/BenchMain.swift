#if canImport(Glibc)
    import Glibc
#endif

/// `aether-bench [SUITE ...] [--options]` (see `BenchArguments`): release-only benchmarks that print the median of several
/// runs and a ratio against a fair baseline measured in the same run.
@main
struct BenchMain {
    /// Every suite, by name.
    static let suites: [any BenchSuite.Type] = [
        IOBench.self,
        IntegrityBench.self,
        CodingBench.self,
        RaptorQBench.self,
        PredictBench.self,
        ScheduleBench.self,
        UploadSecurityBench.self,
        SessionBench.self,
        TransportBench.self,
        ReceiverBench.self,
        ReceiverUploadBench.self,
        FleetBench.self,
        CaptureBench.self,
        VaultBench.self,
        E2EBench.self,
        LinkLabBench.self,
    ]

    static func main() async {
        // Closures, not key paths (`map(\.name)`): a key path on the existential metatype crashes
        // swift-frontend 6.3.1 in release SILGen.
        let names = suites.map { $0.name }
        let request: BenchArguments.Request
        do {
            request = try BenchArguments.parse(Array(CommandLine.arguments.dropFirst()), known: names)
        } catch {
            printError("aether-bench: \(error)\nrun `aether-bench --help` for the usage")
            exit(2)
        }
        guard case .run(let requested, let options) = request else {
            print(BenchArguments.usage(suites: suites.map { ($0.name, $0.runsByDefault, $0.summary) }))
            exit(0)
        }
        #if DEBUG
            printError("aether-bench refuses debug builds: run `swift run -c release aether-bench`")
            exit(2)
        #else
            let selected =
                requested.isEmpty ? suites.filter { $0.runsByDefault } : suites.filter { requested.contains($0.name) }
            for suite in selected {
                do {
                    try await suite.run(options: options)
                } catch {
                    print("\(suite.name): failed: \(error)")
                    exit(1)
                }
            }
        #endif
    }

    /// One line on stderr.
    static func printError(_ line: String) {
        var standardError = StandardError()
        print(line, to: &standardError)
    }
}

/// stderr as a `TextOutputStream`; calls `write(2)` on descriptor 2 (a short usage line: one call).
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        let bytes = Array(string.utf8)
        _ = unsafe bytes.withUnsafeBytes { unsafe Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

/// One group of benchmarks (`io`, `integrity`, `coding` ...).
protocol BenchSuite: SendableMetatype {
    /// The name that selects it.
    static var name: String { get }
    /// Whether a bare `aether-bench` runs it (the trace replays do not).
    static var runsByDefault: Bool { get }
    /// One line for the usage.
    static var summary: String { get }
    /// Runs the suite and prints its lines.
    static func run(options: [String]) async throws
}
