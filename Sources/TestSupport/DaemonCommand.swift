import Foundation

/// Runs a command that leaves daemons behind (`pg_ctl start`, `scripts/rgw.sh start`) and waits for it.
enum DaemonCommand {
    /// What the command did: its exit status and everything it printed (standard output and error together).
    struct Outcome {
        let status: Int32
        let output: String
    }

    /// Runs `executable` with `arguments` from `/`; `tag` names its output file. Throws the launch error's text
    /// when it could not start.
    static func run(_ executable: String, _ arguments: [String], tag: String) throws(LaunchFailure) -> Outcome {
        let process = Process()
        // Through bash, which closes every descriptor past 2 first: the daemons the command leaves running must not
        // inherit the one Foundation watches to learn that the child exited (waitUntilExit would never return).
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments =
            [
                "-c",
                "for fd in /proc/$$/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\" 2>/dev/null; done; "
                    + "exec \"$@\"",
                "run", executable,
            ] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        // A file, not a pipe: nothing to drain while waiting.
        let outputPath = NSTemporaryDirectory() + "aether-\(tag)-run-" + UUID().uuidString
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath)
        else { throw LaunchFailure(description: "cannot make \(outputPath)") }
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw LaunchFailure(description: "cannot run \(executable): \(error)") }
        process.waitUntilExit()
        try? output.close()
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Outcome(status: process.terminationStatus, output: text)
    }

    /// The command could not be started.
    struct LaunchFailure: Error {
        let description: String
    }
}
