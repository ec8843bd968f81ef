import Foundation
import Testing

/// Runs the project's Python interop peers from the venv that `make test` creates (`.venv`).
///
/// A missing venv is a test failure with a clear message, never a skip: interop is part of `make test`.
enum PythonPeer {
    /// The package root, found from this file's location.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's interpreter (`AETHER_PYTHON` overrides it).
    static var python: String {
        if let override = ProcessInfo.processInfo.environment["AETHER_PYTHON"] { return override }
        return packageRoot.appendingPathComponent(".venv/bin/python").path
    }

    /// A process, not yet started, that runs `Tests/Interop/peers/SCRIPT` with `arguments` in the venv.
    /// Throws when the venv is missing.
    static func process(_ script: String, _ arguments: [String] = []) throws -> Process {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw PeerError(message: "no Python venv at \(python); run `make test` (it creates .venv)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [packageRoot.appendingPathComponent("Tests/Interop/peers/\(script)").path] + arguments
        return process
    }

    /// Runs `Tests/Interop/peers/SCRIPT` with `arguments`, feeding `input` on stdin; returns stdout.
    /// Throws when the interpreter is missing or the script exits non-zero (its stderr is in the error).
    static func run(_ script: String, _ arguments: [String] = [], input: Data = Data()) throws -> Data {
        let process = try process(script, arguments)
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Write stdin on another thread so a peer that answers while still reading cannot deadlock us.
        let writer = Thread {
            stdin.fileHandleForWriting.write(input)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let errorData = LockedData()
        let errorReader = Thread { errorData.set(stderr.fileHandleForReading.readDataToEndOfFile()) }
        errorReader.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { usleep(1000) }
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errorData.value, as: UTF8.self)
            throw PeerError(message: "\(script) exited \(process.terminationStatus): \(text)")
        }
        return output
    }

    /// A peer failed to run.
    struct PeerError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

/// Data handed from a reader thread.
final class LockedData: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var stored: Data?

    func set(_ data: Data) { lock.withLock { stored = data } }
    var isSet: Bool { lock.withLock { stored != nil } }
    var value: Data { lock.withLock { stored ?? Data() } }
}
