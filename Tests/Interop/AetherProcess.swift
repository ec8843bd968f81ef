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
    private let input = Pipe()

    convenience init(_ arguments: [String], input: String = "") throws {
        try self.init(arguments, inputBytes: Array(input.utf8))
    }

    /// Starts `aether` with `arguments`; `inputBytes` go to its standard input exactly, which is then closed
    /// unless `keepInputOpen` (then `writeInput` and `closeInput` feed it). `nonBlockingInput` hands the child
    /// a standard input in `O_NONBLOCK` mode, as a parent shell may; `environment` adds to (or overrides) the test
    /// process's environment.
    init(
        _ arguments: [String], inputBytes: [UInt8], keepInputOpen: Bool = false, nonBlockingInput: Bool = false,
        environment: [String: String] = [:]
    ) throws {
        directory = try SessionLive.temporaryDirectory()
        outPath = directory + "/out"
        errPath = directory + "/err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: SessionLive.aetherPath)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        if nonBlockingInput {
            let descriptor = input.fileHandleForReading.fileDescriptor
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        process.standardInput = input
        try process.run()
        writeInput(inputBytes)
        if !keepInputOpen { closeInput() }
    }

    /// Writes more bytes to the child's standard input.
    func writeInput(_ bytes: [UInt8]) { input.fileHandleForWriting.write(Data(bytes)) }

    /// Closes the child's standard input (its end of input).
    func closeInput() { try? input.fileHandleForWriting.close() }

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
