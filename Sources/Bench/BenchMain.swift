#if canImport(Glibc)
    import Glibc
#endif

/// `aether-bench [SUITE ...] [--options]`: release-only benchmarks that print the median of several
/// runs and a ratio against a fair baseline measured in the same run.
@main
struct BenchMain {
    /// Every suite, by name.
    static let suites: [any BenchSuite.Type] = [
        IOBench.self,
        IntegrityBench.self,
        CodingBench.self,
        PredictBench.self,
        ScheduleBench.self,
        UploadSecurityBench.self,
        SessionBench.self,
        TransportBench.self,
    ]

    static func main() async {
        #if DEBUG
            print("aether-bench refuses debug builds: run `swift run -c release aether-bench`")
            exit(2)
        #else
            let arguments = Array(CommandLine.arguments.dropFirst())
            let names = arguments.prefix { !$0.hasPrefix("--") }
            let options = Array(arguments.dropFirst(names.count))
            // Closures, not key paths: `\.runsByDefault` on `any BenchSuite.Type` crashes swift-frontend 6.3.1 (-O).
            // Closures, not key paths: `\.runsByDefault` on `any BenchSuite.Type` crashes 6.3.1 SILGen in release.
            // Closures, not key paths (`map(\.name)`): a key path on the existential metatype crashes
            // swift-frontend 6.3.1 in release SILGen.
            let selected =
                names.isEmpty ? suites.filter { $0.runsByDefault } : suites.filter { names.contains($0.name) }
            let unknown = names.filter { name in !suites.contains { $0.name == name } }
            guard unknown.isEmpty else {
                print(
                    "unknown suite(s): \(unknown.joined(separator: ", ")); known: \(suites.map { $0.name }.joined(separator: ", "))"
                )
                exit(2)
            }
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
}

/// One group of benchmarks (`io`, `integrity`, `coding` ...).
protocol BenchSuite: SendableMetatype {
    /// The name that selects it.
    static var name: String { get }
    /// Whether a bare `aether-bench` runs it (trace replays need `--traces` and do not).
    static var runsByDefault: Bool { get }
    /// Runs the suite and prints its lines.
    static func run(options: [String]) async throws
}
