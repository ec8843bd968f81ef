import AetherIO
import Foundation
import Testing

@testable import AetherTransport

/// The Python secure-session host (`peers/session_host.py`, on PyPI `noiseprotocol`) as a child process on
/// a loopback port, reading the host stores of a state directory. Its JSON-lines log is read from a file;
/// `stop` kills it and waits (the peer also exits by itself when the test process goes away).
final class PythonHostProcess: @unchecked Sendable {
    // @unchecked: Process is used from the creating test only; the log file is read after writes land.
    let process = Process()
    let port: UInt16
    private let directory: String
    private let outPath: String
    private let errPath: String

    /// Starts the peer on `port` (0: a free one) and waits until it listens.
    init(stateDir: String, port: UInt16 = 0, livenessMilliseconds: Int = 15_000, keepAlive: Bool = true) throws {
        guard FileManager.default.isExecutableFile(atPath: PythonPeer.python) else {
            throw PythonPeer.PeerError(message: "no Python venv at \(PythonPeer.python); run `make test`")
        }
        directory = try SessionLive.temporaryDirectory()
        outPath = directory + "/out"
        errPath = directory + "/err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: PythonPeer.python)
        process.arguments =
            [
                PythonPeer.packageRoot.appendingPathComponent("Tests/Interop/peers/session_host.py").path,
                "--state-dir", stateDir, "--port", "\(port)", "--liveness-ms", "\(livenessMilliseconds)",
            ] + (keepAlive ? [] : ["--no-keepalive"])
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let process = process
        let (outPath, errPath, directory) = (outPath, errPath, directory)
        var listening: Int?
        do {
            try SessionLive.wait("the Python host to listen") {
                guard process.isRunning else {
                    throw SessionLive.Failure(description: "the Python host exited: \(Self.read(errPath))")
                }
                let events = Self.parse(Self.read(outPath))
                listening = events.first { $0["event"] as? String == "listening" }?["port"] as? Int
                return listening != nil
            }
        } catch {
            Self.terminate(process)
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        self.port = UInt16(listening ?? 0)
    }

    /// Where the peer listens.
    var address: UDPAddress { .loopback(port: port) }

    /// Every event the peer logged so far, in order.
    var events: [[String: Any]] { Self.parse(Self.read(outPath)) }

    /// The events named `name`.
    func events(_ name: String) -> [[String: Any]] { events.filter { $0["event"] as? String == name } }

    /// How many message 1s the peer answered with `kind` (`accept`, `tombstone`, ...): handshakes run.
    func answers(_ kind: String) -> Int { events("answer").count { $0["kind"] as? String == kind } }

    /// The application records the peer received, as (inner type, bytes).
    var records: [(type: Int, bytes: [UInt8])] {
        events("record").compactMap { event in
            guard let type = event["type"] as? Int, let hex = event["data"] as? String,
                let bytes = try? Hex.decode(hex)
            else { return nil }
            return (type, bytes)
        }
    }

    /// The peer's stderr (a Python traceback if it failed).
    var stderr: String { Self.read(errPath) }

    /// Kills the peer (if it still runs), waits for it and removes its files.
    func stop() {
        Self.terminate(process)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// SIGTERM, then SIGKILL if the peer is still there after 5 s, then wait: `stop` never hangs.
    private static func terminate(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        let end = Date().addingTimeInterval(5)
        while process.isRunning, Date() < end { usleep(5_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    private static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    private static func parse(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }
}
