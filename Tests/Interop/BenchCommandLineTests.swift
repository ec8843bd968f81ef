import Foundation
import Testing

/// The command line of the built `aether-bench` (debug build: usage and usage errors work there too; running a
/// suite is refused, so a `--help` that ran the suites would show up as that refusal).
@Suite struct BenchCommandLineTests {
    static let suites = [
        "io", "integrity", "coding", "raptorq", "predict", "schedule", "uploadsec", "session", "transport",
        "receiver-engine", "receiver", "fleet", "captures", "vault", "e2e", "lab",
    ]

    /// `aether-bench ARGS` to completion (bounded); returns (status, stdout, stderr).
    static func run(_ arguments: [String]) throws -> (Int32, String, String) {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outPath = directory + "/out"
        let errPath = directory + "/err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let process = Process()
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("aether-bench").path
        process.executableURL = URL(
            fileURLWithPath: FileManager.default.isExecutableFile(atPath: beside)
                ? beside : PythonPeer.packageRoot.appendingPathComponent(".build/debug/aether-bench").path)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        try SessionLive.wait("aether-bench \(arguments.joined(separator: " ")) to exit", timeout: 20) {
            !process.isRunning
        }
        process.waitUntilExit()
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return (process.terminationStatus, out, err)
    }

    @Test(arguments: [["--help"], ["-h"], ["io", "--help"], ["predict", "-h", "--traces", "/nonexistent"]])
    func helpPrintsTheUsageWithEverySuiteAndExitsZero(arguments: [String]) throws {
        let (status, out, err) = try Self.run(arguments)
        #expect(status == 0)
        #expect(out.hasPrefix("usage: aether-bench"))
        // The suite table: the lines after "suites ..." up to the first blank line, one suite name each.
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false)
        let table = lines.drop { !$0.hasPrefix("suites") }.dropFirst().prefix { !$0.isEmpty }
        let listed = table.compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(listed == Self.suites)
        #expect(err.isEmpty)
    }

    @Test(arguments: [
        (["--bogus"], "unknown option --bogus"), (["io", "--verbose"], "unknown option --verbose"),
        (["nosuch"], "unknown suite nosuch"), (["io", "nosuch"], "unknown suite nosuch"),
        (["predict", "--traces"], "option --traces needs a value"), (["-x"], "unknown option -x"),
    ])
    func unknownSuitesAndOptionsExitTwoAndRunNothing(arguments: [String], message: String) throws {
        let (status, out, err) = try Self.run(arguments)
        #expect(status == 2)
        #expect(out.isEmpty)
        #expect(err.contains(message))
        #expect(!err.contains("refuses debug builds"))
    }

    @Test func aValidLineReachesTheDebugRefusalWithExitTwo() throws {
        let (status, out, err) = try Self.run(["predict", "--traces", "/nonexistent", "--print-sink"])
        #expect(status == 2)
        #expect(out.isEmpty)
        #expect(err.contains("refuses debug builds"))
    }
}
