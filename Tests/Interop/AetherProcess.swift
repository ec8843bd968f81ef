import AetherIO
import AetherSecurity
import Foundation
import Synchronization
import Testing

@testable import AetherTransport

/// An `aether` child process with its output in files; killed (and waited for) by `stop`.
final class AetherProcess: @unchecked Sendable {
    // @unchecked: Process is used from the creating test only; the files are read after writes land.
    let process = Process()
    let outPath: String
    let errPath: String
    private let directory: String

    init(_ arguments: [String], input: String = "") throws {
        directory = try SessionLive.temporaryDirectory()
        outPath = directory + "/out"
        errPath = directory + "/err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: SessionLive.aetherPath)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try? stdin.fileHandleForWriting.close()
    }

    var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    /// Waits for the process to exit by itself.
    func wait(timeout: Double) throws -> (Int32, String, String) {
        try SessionLive.wait("aether \(process.arguments?.joined(separator: " ") ?? "") to exit", timeout: timeout) {
            !process.isRunning
        }
        process.waitUntilExit()
        defer { cleanup() }
        return (process.terminationStatus, stdout, stderr)
    }

    /// Kills the process (if it still runs), waits for it and removes its files.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        cleanup()
    }

    private func cleanup() { try? FileManager.default.removeItem(atPath: directory) }
}
