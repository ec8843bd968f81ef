import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process of `aether-bench e2e`: a server that runs until `stop()` (it also exits when its stdin closes),
/// or a client that is waited for with a deadline and stopped (SIGTERM, then SIGKILL) when it passes it.
/// Standard output goes to a file in the bench's directory (a pipe could fill up and stall the child).
final class BenchChild {
    /// The outcome of a waited-for client.
    struct Finish {
        /// Wall seconds from the start to the exit, or to the deadline when it was stopped.
        let seconds: Double
        /// The exit status (128 + signal when killed by one).
        let status: Int32
        /// Whether the deadline passed and the child was stopped.
        let stopped: Bool
        /// What it printed on standard output.
        let output: String
    }

    let process = Process()
    let started: Double
    private let input = Pipe()
    private let outputPath: String
    private let errorPath: String

    /// Starts `arguments` (the first is the executable path), inside network namespace `namespace` when given.
    init(_ arguments: [String], namespace: String? = nil, environment: [String: String] = [:], logs: String) throws {
        let full = namespace.map { ["/usr/sbin/ip", "netns", "exec", $0] + arguments } ?? arguments
        guard let executable = full.first else { throw BenchError("no command to run") }
        outputPath = logs + ".out"
        errorPath = logs + ".err"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            FileManager.default.createFile(atPath: errorPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath), let error = FileHandle(forWritingAtPath: errorPath)
        else { throw BenchError("cannot create the log files \(logs).*") }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(full.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        started = Measure.now()
        try process.run()
        try? output.close()
        try? error.close()
    }

    /// What the child printed on standard output so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// The child's pid.
    var pid: Int32 { process.processIdentifier }

    /// What the child printed on standard error so far (a receiver's request log).
    var errors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// The last lines of its standard error, for a failure message.
    var errorTail: String {
        let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(3).joined(separator: " | ")
    }

    /// Waits until a line of standard output starts with `prefix` and returns that line; throws when the child
    /// exits first or `timeout` seconds pass.
    /// The look after the deadline counts too: a task resumed late (its threads busy) judges what is there.
    func waitForLine(startingWith prefix: String, timeout: Double, what: String) async throws -> String {
        let deadline = Measure.now() + timeout
        while true {
            if let line = output.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) { return String(line) }
            guard process.isRunning else { throw BenchError("\(what) exited: \(errorTail)") }
            guard Measure.now() < deadline else { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        stop()
        throw BenchError("\(what) did not start within \(Int(timeout)) s: \(errorTail)")
    }

    /// Waits for the exit, stopping the child once `deadline` (monotonic seconds) passes.
    func finish(deadline: Double) async -> Finish {
        var stopped = false
        while process.isRunning {
            if Measure.now() >= deadline {
                stopped = true
                stop()
                break
            }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        process.waitUntilExit()
        let seconds = stopped ? deadline - started : Measure.now() - started
        let status =
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return Finish(seconds: seconds, status: status, stopped: stopped, output: output)
    }

    /// Writes `text` to its stdin.
    func send(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Closes its stdin, sends SIGTERM, and SIGKILL after two seconds if it still runs.
    func stop() {
        try? input.fileHandleForWriting.close()
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Measure.now() + 2
        while process.isRunning && Measure.now() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
