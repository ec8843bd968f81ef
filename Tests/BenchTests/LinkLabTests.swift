import Foundation
import Testing

@testable import aether_bench

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's Python, for the small TCP peers of `LinkLabTests` (the suite is skipped without it).
enum SystemPython {
    static let path = "/usr/bin/python3"
}

/// The emulated link of `aether-bench e2e` on the real kernel (root only): the namespace, the htb rate, the reset
/// windows and the payload counter, and that it is all gone after `tearDown()`.
@Suite(
    .serialized,
    .enabled(if: LinkLab.unavailableReason() == nil && FileManager.default.fileExists(atPath: SystemPython.path)))
struct LinkLabTests {
    static let python = SystemPython.path

    /// A TCP server in the namespace that answers `ok` for each whole 64 KiB it reads.
    static let echo = """
        import socket, sys
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((sys.argv[1], 9500)); s.listen(1); print("ready", flush=True)
        c, _ = s.accept()
        n = 0
        while True:
            b = c.recv(65536)
            if not b: break
            n += len(b)
            if n >= 65536:
                n -= 65536
                c.sendall(b"ok")
        """

    /// A client here: sends 64 KiB, waits for `ok`, prints `first`; then, on `go` on its stdin, sends again and
    /// prints `second ok` or `second reset`.
    static let client = """
        import socket, sys
        c = socket.create_connection((sys.argv[1], 9500), timeout=10)
        c.sendall(b"x" * 65536); c.recv(2); print("first", flush=True)
        sys.stdin.readline()
        try:
            c.sendall(b"y" * 65536); r = c.recv(2)
            print("second ok" if r == b"ok" else "second closed", flush=True)
        except (ConnectionResetError, BrokenPipeError):
            print("second reset", flush=True)
        except socket.timeout:
            print("second timeout", flush=True)
        """

    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "aether-linklab-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    /// Runs the exchange with the reset window `resetting` during the second send; returns the client's verdict.
    static func exchange(lab: LinkLab, resetting: Bool, directory: String) async throws -> String {
        let server = try BenchChild(
            [python, "-c", echo, lab.peerAddress], namespace: lab.namespace, logs: directory + "/server")
        defer { server.stop() }
        _ = try await server.waitForLine(startingWith: "ready", timeout: 20, what: "the echo server")
        let client = try BenchChild([python, "-c", client, lab.peerAddress], logs: directory + "/client")
        defer { client.stop() }
        _ = try await client.waitForLine(startingWith: "first", timeout: 20, what: "the client")
        try lab.setResetting(resetting)
        client.send("go\n")
        let verdict = try await client.waitForLine(startingWith: "second", timeout: 30, what: "the client")
        try lab.setResetting(false)
        return verdict
    }

    @Test func aResetWindowResetsAnEstablishedConnectionAndClosingItLetsTrafficThrough() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lab = try LinkLab(rateMbit: 50, lossPercent: 0)
        defer { lab.tearDown() }
        #expect(try await Self.exchange(lab: lab, resetting: true, directory: directory) == "second reset")
        #expect(try await Self.exchange(lab: lab, resetting: false, directory: directory) == "second ok")
    }

    @Test func theRateIsTheHtbClassesAndThePayloadCounterCountsWhatCrossed() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lab = try LinkLab(rateMbit: 20, lossPercent: 0)
        defer { lab.tearDown() }
        #expect(try LinkLab.run(["/usr/sbin/tc", "class", "show", "dev", lab.hostDevice]).contains("rate 20Mbit"))
        try lab.setRate(7.5)
        #expect(try LinkLab.run(["/usr/sbin/tc", "class", "show", "dev", lab.hostDevice]).contains("rate 7500Kbit"))
        let before = try lab.payloadBytes()
        _ = try await Self.exchange(lab: lab, resetting: false, directory: directory)
        // Two 64 KiB sends, nothing lost: the counter's payload is exactly what the client sent.
        let payload = try lab.payloadBytes() - before
        #expect(payload == 2 * 65536, "counted \(payload) payload bytes")
    }

    @Test func tearingDownRemovesTheNamespaceAndTheVeth() throws {
        let lab = try LinkLab(rateMbit: 20, lossPercent: 3)
        #expect(try LinkLab.run(["/usr/sbin/ip", "netns", "list"]).contains(lab.namespace))
        lab.tearDown()
        #expect(!(try LinkLab.run(["/usr/sbin/ip", "netns", "list"]).contains(lab.namespace)))
        #expect(throws: BenchError.self) { try LinkLab.run(["/usr/sbin/ip", "link", "show", lab.hostDevice]) }
    }
}
