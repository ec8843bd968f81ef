import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process in one of a lab's namespaces (`ip netns exec`, which becomes the command: its pid is the
/// command's). Standard output and error go to files (a pipe could fill and stall the child); standard input is a
/// pipe, closed by `stop()`. The lab stops every child it started when it is torn down.
public final class LinkLabProcess: Sendable {
    private let process = Process()
    private let input = Pipe()
    /// Where standard output goes.
    public let outputPath: String
    /// Where standard error goes.
    public let errorPath: String
    /// Monotonic seconds at the start.
    public let started: Double

    init(_ arguments: [String], namespace: String, environment: [String: String], logs: String) throws(LinkLabError) {
        guard !arguments.isEmpty else { throw LinkLabError(.commandFailed, "no command to run") }
        outputPath = logs + ".out"
        errorPath = logs + ".err"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            FileManager.default.createFile(atPath: errorPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath), let error = FileHandle(forWritingAtPath: errorPath)
        else { throw LinkLabError(.commandFailed, "cannot create the log files \(logs).out and .err") }
        defer {
            try? output.close()
            try? error.close()
        }
        process.executableURL = URL(fileURLWithPath: LabCommand.ip)
        process.arguments = ["netns", "exec", namespace] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        started = LinkLab.seconds()
        do {
            try process.run()
        } catch {
            throw LinkLabError(.commandFailed, "cannot start \(arguments[0]) in \(namespace): \(error)")
        }
    }

    /// The process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether it still runs.
    public var isRunning: Bool { process.isRunning }

    /// What it printed on standard output so far.
    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// The last three lines of its standard error, for a failure message.
    public var errorTail: String {
        let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(3).joined(separator: " | ")
    }

    /// Waits until a line of standard output starts with `prefix` and returns it; `.timedOut` when `timeout`
    /// seconds pass, `.commandFailed` when the process exits first.
    public func waitForLine(startingWith prefix: String, timeout: Double) async throws(LinkLabError) -> String {
        let deadline = LinkLab.seconds() + timeout
        while LinkLab.seconds() < deadline {
            if let line = output.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) { return String(line) }
            guard process.isRunning else {
                throw LinkLabError(.commandFailed, "the process exited before printing \(prefix): \(errorTail)")
            }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        throw LinkLabError(.timedOut, "no line starting with \(prefix) within \(timeout) s: \(errorTail)")
    }

    /// Waits for the exit, stopping the process once `deadline` (monotonic seconds, `LinkLab.seconds()`) passes:
    /// its exit status (128 + signal when a signal ended it) and whether it was stopped.
    public func waitForExit(deadline: Double) async -> (status: Int32, stopped: Bool) {
        var stopped = false
        while process.isRunning {
            if LinkLab.seconds() >= deadline {
                stopped = true
                stop()
                break
            }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        process.waitUntilExit()
        let signalled = process.terminationReason == .uncaughtSignal
        return (signalled ? 128 + process.terminationStatus : process.terminationStatus, stopped)
    }

    /// Writes `text` to its standard input.
    public func send(_ text: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    }

    /// Closes its standard input, sends SIGTERM, and SIGKILL after two seconds if it still runs.
    public func stop() {
        try? input.fileHandleForWriting.close()
        guard process.isRunning else { return }
        process.terminate()
        let deadline = LinkLab.seconds() + 2
        while process.isRunning && LinkLab.seconds() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// The outcome of `LinkLab.run`: a command's wall time and exit, and what the link carried meanwhile.
public struct LinkLabRun: Sendable {
    /// Wall seconds from the start to the exit (to the deadline when it was stopped).
    public let seconds: Double
    /// The exit status (128 + signal when a signal ended it).
    public let status: Int32
    /// Whether the deadline passed and the command was stopped.
    public let stopped: Bool
    /// What it printed on standard output.
    public let output: String
    /// The last lines of its standard error.
    public let errorTail: String
    /// The lab's counters over the run (the difference between its end and its start).
    public let counters: LinkLabCounters
}
