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
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aether-live-\(UUID().uuidString)")
            .path
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

    /// Runs `aether ARGS` to completion with `input` on stdin byte for byte; returns (status, stdout bytes, stderr).
    static func runAether(_ arguments: [String], inputBytes: [UInt8]) throws -> (Int32, [UInt8], String) {
        let process = try AetherProcess(arguments, inputBytes: inputBytes)
        return try process.waitForBytes(timeout: 20)
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
