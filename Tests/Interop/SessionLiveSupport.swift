import AetherIO
import AetherSecurity
import Foundation
import Synchronization
import Testing

@testable import AetherTransport

/// Helpers of the live secure-session tests: the built `aether` binary as a separate process, temporary
/// state directories, a free loopback port, and a log of a client's events with bounded waits.
enum SessionLive {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The `aether` executable built next to the test bundle (`.build/debug/aether`).
    static var aetherPath: String {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = bundleDirectory.appendingPathComponent("aether").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return PythonPeer.packageRoot.appendingPathComponent(".build/debug/aether").path
    }

    /// A fresh temporary directory, removed by `cleanup`.
    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-live-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A loopback port that was free a moment ago.
    static func freePort() throws -> UInt16 {
        let probe = try UDPSocket(binding: .loopback(port: 0))
        return probe.localAddress.port
    }

    /// Runs `aether ARGS` to completion; returns (status, stdout, stderr).
    @discardableResult
    static func runAether(_ arguments: [String], input: String = "") throws -> (Int32, String, String) {
        let process = try AetherProcess(arguments, input: input)
        return try process.wait(timeout: 20)
    }

    /// Pairs a new key for `hostID` in `stateDir` and returns the key (read back from the device store).
    static func pair(hostID: HostID, stateDir: String) throws -> PairedKey {
        let (status, out, err) = try runAether(["session", "pair", "--host-id", hostID.hex, "--state-dir", stateDir])
        guard status == 0, let range = out.range(of: "key=") else { throw Failure(description: "pair failed: \(err)") }
        let hex = String(out[range.upperBound...].prefix(32))
        let item = try FileKeyStore(directory: stateDir + "/keys").load(hostID: hostID)
        guard let key = item?.keys.first(where: { $0.id.hex == hex }) else {
            throw Failure(description: "paired key \(hex) not in the device store")
        }
        return key
    }

    /// Polls `condition` every 5 ms until it holds or `timeout` seconds pass (then throws `what`).
    static func wait(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
        let end = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < end else { throw Failure(description: "timed out waiting for \(what)") }
            usleep(5_000)
        }
    }
}

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

/// A host process started with `aether session host` on a free loopback port.
struct HostProcess {
    let process: AetherProcess
    let address: UDPAddress

    init(stateDir: String, extra: [String] = []) throws {
        let port = try SessionLive.freePort()
        address = .loopback(port: port)
        process = try AetherProcess(
            ["session", "host", "--port", "\(port)", "--echo", "--state-dir", stateDir] + extra)
        let process = process
        try SessionLive.wait("the host to listen") { process.stderr.contains("listening on") }
    }
}

/// The events a `SessionClient` reported, for bounded waits from the test.
final class ClientEvents: Sendable {
    private let events = Mutex<[SessionClient.Event]>([])

    func append(_ event: SessionClient.Event) { events.withLock { $0.append(event) } }

    var all: [SessionClient.Event] { events.withLock { $0 } }

    var sessionsUp: [ReconnectStateMachine.SessionInfo] {
        all.compactMap { if case .up(let info) = $0 { info } else { nil } }
    }

    var records: [String] {
        all.compactMap { if case .record(_, let bytes) = $0 { String(decoding: bytes, as: UTF8.self) } else { nil } }
    }

    var downs: Int { all.count { if case .down = $0 { true } else { false } } }

    var counts: CountsAnswer? {
        all.compactMap { if case .counts(let answer) = $0 { answer } else { nil } }.last
    }
}

extension SessionClient {
    /// A client on a fresh loopback socket, logging its events.
    static func live(host: UDPAddress, key: PairedKey, log: ClientEvents) throws -> SessionClient {
        let socket = try UDPSocket(binding: .loopback(port: 0))
        let client = SessionClient(socket: socket, host: host, keys: [key.id: key.key]) { log.append($0) }
        try client.start()
        return client
    }
}
