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

    convenience init(_ arguments: [String], input: String = "") throws {
        try self.init(arguments, inputBytes: Array(input.utf8))
    }

    /// Starts `aether` with `arguments`; `inputBytes` go to its standard input exactly, which is then closed.
    init(_ arguments: [String], inputBytes: [UInt8]) throws {
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
        stdin.fileHandleForWriting.write(Data(inputBytes))
        try? stdin.fileHandleForWriting.close()
    }

    var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    /// Standard output as bytes (it need not be UTF-8).
    var stdoutBytes: [UInt8] { FileManager.default.contents(atPath: outPath).map { Array($0) } ?? [] }
    var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    /// Waits for the process to exit by itself.
    func wait(timeout: Double) throws -> (Int32, String, String) {
        let (status, out, err) = try waitForBytes(timeout: timeout)
        return (status, String(decoding: out, as: UTF8.self), err)
    }

    /// Waits for the process to exit by itself; standard output as bytes.
    func waitForBytes(timeout: Double) throws -> (Int32, [UInt8], String) {
        try SessionLive.wait("aether \(process.arguments?.joined(separator: " ") ?? "") to exit", timeout: timeout) {
            !process.isRunning
        }
        process.waitUntilExit()
        defer { cleanup() }
        return (process.terminationStatus, stdoutBytes, stderr)
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
