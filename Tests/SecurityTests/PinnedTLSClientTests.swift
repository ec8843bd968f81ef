import AetherIO
import AetherTestSupport
import Foundation
import Testing

@testable import AetherSecurity

#if canImport(Glibc)
    import Glibc
#endif

/// An `openssl s_server` on 127.0.0.1 with a random free port, serving a chain made at test time.
/// Stopped by `stop()`, which every test calls in a `defer`, so it ends even when an expectation fails.
final class TLSTestServer {
    let process = Process()
    let port: UInt16
    private let input = Pipe()

    init(pki: TestPKI, leaf: String, chain: String) throws {
        guard let openssl = OpenSSLTool.executable else { throw OpenSSLTool.Failure(description: "no openssl") }
        process.executableURL = openssl
        process.currentDirectoryURL = pki.directory
        process.arguments = [
            "s_server", "-accept", "127.0.0.1:0", "-cert", "\(leaf).pem", "-key", "\(leaf).key", "-cert_chain",
            "\(chain).pem",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = input
        try process.run()
        // s_server prints "ACCEPT 127.0.0.1:PORT" once it listens; read until that line (no sleeping).
        var text = ""
        var found: UInt16?
        while found == nil {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty {
                _ = kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw OpenSSLTool.Failure(description: "s_server exited before listening: \(text)")
            }
            text += String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n") where line.hasPrefix("ACCEPT 127.0.0.1:") {
                found = UInt16(line.dropFirst("ACCEPT 127.0.0.1:".count).trimmingCharacters(in: .whitespaces))
            }
        }
        port = found ?? 0
    }

    /// SIGKILL: the test runner's threads block SIGTERM and a spawned child inherits that mask, so
    /// `Process.terminate()` would not stop it.
    func stop() {
        if process.isRunning { _ = kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

@Suite(.serialized) struct PinnedTLSClientTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    func manager(ca: [String], leaf: [String] = [], pki: TestPKI) throws -> CertificatePinManager {
        let configuration = try PinConfiguration(
            caPins: Set(ca.map { try pki.pin($0) }), emergencyLeafPins: Set(leaf.map { try pki.pin($0) }),
            issuedAt: Self.start)
        return CertificatePinManager(
            configuration: configuration, trustedKeys: [], clock: ManualClock(Self.start))
    }

    @Test func connectsWhenTheIntermediatePinMatchesAndIsRefusedWhenNoPinDoes() throws {
        let pki = try TestPKI.get()
        let server = try TLSTestServer(pki: pki, leaf: "leafA", chain: "intA")
        defer { server.stop() }
        let root = pki.url("root.pem").path

        let version = try PinnedTLSClient.handshake(
            host: "127.0.0.1", port: server.port, serverName: "localhost", trustAnchorsFile: root,
            manager: manager(ca: ["intA"], pki: pki))
        #expect(version == "TLSv1.3")

        let refused = #expect(throws: SecurityError.self) {
            try PinnedTLSClient.handshake(
                host: "127.0.0.1", port: server.port, serverName: "localhost", trustAnchorsFile: root,
                manager: manager(ca: ["intB"], pki: pki))
        }
        #expect(refused?.code == .pinMismatch)

        let leafPinned = try PinnedTLSClient.handshake(
            host: "127.0.0.1", port: server.port, serverName: "localhost", trustAnchorsFile: root,
            manager: manager(ca: ["intB"], leaf: ["leafA"], pki: pki))
        #expect(leafPinned == "TLSv1.3")
    }

    @Test func aMatchingPinNeverOverridesChainValidation() throws {
        let pki = try TestPKI.get()
        let server = try TLSTestServer(pki: pki, leaf: "leafA", chain: "intA")
        defer { server.stop() }
        // Trust anchors that do not contain the root: the pin matches, the chain does not verify.
        let untrusted = #expect(throws: SecurityError.self) {
            try PinnedTLSClient.handshake(
                host: "127.0.0.1", port: server.port, serverName: "localhost",
                trustAnchorsFile: pki.url("intB.pem").path, manager: manager(ca: ["intA"], pki: pki))
        }
        #expect(untrusted?.code == .authenticationFailed)
        // The right root but the wrong host name.
        let wrongName = #expect(throws: SecurityError.self) {
            try PinnedTLSClient.handshake(
                host: "127.0.0.1", port: server.port, serverName: "example.com",
                trustAnchorsFile: pki.url("root.pem").path, manager: manager(ca: ["intA"], pki: pki))
        }
        #expect(wrongName?.code == .authenticationFailed)
    }

    @Test func installingPinningRaisesButNeverLowersTheMinimumVersionAndForcesPeerVerification() throws {
        let pki = try TestPKI.get()
        var pins = try manager(ca: ["intA"], pki: pki)
        // 0 means "the lowest the library supports"; 0x0301 is TLS 1.0, 0x0303 TLS 1.2, 0x0304 TLS 1.3.
        for (initial, expected) in [(0, 0x0303), (0x0301, 0x0303), (0x0303, 0x0303), (0x0304, 0x0304)] {
            let result = try #require(OpenSSL.installProbe(minimumVersion: initial, verifyMode: 0, manager: pins))
            #expect(result.minimumVersion == expected)
            #expect(result.verifyMode & 0x01 == 0x01)  // SSL_VERIFY_PEER
        }
        // Each freed SSL_CTX released the reference it held.
        #expect(isKnownUniquelyReferenced(&pins))
    }
}
