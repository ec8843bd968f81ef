import AetherIO
import Foundation
import Testing

/// `aether serve` as a process: the start line, the PyPI `tuspy` client uploading and resuming, SIGTERM, and
/// the refusals at start.
@Suite struct ReceiverInteropTests: SeededContent {
    /// A running `aether serve` on a temporary store; its URL is read from the `listening on` line.
    final class Served {
        let store: String
        let process: AetherProcess
        let url: String

        init(_ extra: [String] = []) throws {
            let store = try SessionLive.temporaryDirectory() + "/store"
            let process = try AetherProcess(
                ["serve", "--dir", store, "--port", "0"] + extra, inputBytes: [], keepInputOpen: true)
            var found: String?
            try SessionLive.wait("aether serve to print its URL", timeout: 30) {
                found = process.stdout.split(separator: "\n").first { $0.hasPrefix("listening on ") }
                    .map { String($0.dropFirst("listening on ".count)) }
                return found != nil || !process.process.isRunning
            }
            guard let found else {
                process.stop()
                throw PythonPeer.PeerError(message: "no URL: \(process.stderr)")
            }
            self.store = store
            self.process = process
            url = found
        }

        func object(_ uploadURL: String) -> [UInt8]? {
            guard let id = uploadURL.split(separator: "/").last else { return nil }
            return FileManager.default.contents(atPath: store + "/objects/" + id).map { Array($0) }
        }

        deinit { process.stop() }
    }

    @Test func tuspyUploadsStopsAndResumesAgainstAetherServe() throws {
        let served = try Served()
        let content = Self.bytes(300_000, seed: 77)
        let file = served.store + "-input"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(content)))
        let output = try PythonPeer.run("tuspy_client.py", [served.url + "/uploads", file, "65536", "131072"])
        let result = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        let uploadURL = try #require(result["url"] as? String)
        #expect(result["afterFirst"] as? Int == 131_072)
        #expect(result["resumedAt"] as? Int == 131_072)
        #expect(result["final"] as? Int == 300_000)
        #expect(served.object(uploadURL).map { SHA256.hash($0) } == SHA256.hash(content))
    }

    @Test func sigtermStopsGracefullyWithExitZero() throws {
        let served = try Served(["--log-format", "json"])
        #expect(served.process.stdout.contains("no token file: serving loopback clients only"))
        #expect(served.url.hasPrefix("http://127.0.0.1:"))
        kill(served.process.process.processIdentifier, SIGTERM)
        let (status, out, _) = try served.process.wait(timeout: 30)
        #expect(status == 0)
        #expect(out.contains("stopped"))
    }

    @Test func servingOtherMachinesWithoutTokensIsRefusedAtStart() throws {
        let store = try SessionLive.temporaryDirectory()
        let process = try AetherProcess(["serve", "--dir", store, "--port", "0", "--bind", "0.0.0.0"])
        let (status, _, err) = try process.wait(timeout: 30)
        #expect(status == 1)
        #expect(err.contains("--tokens"))
        let usage = try AetherProcess(["serve", "--dir", store])
        #expect(try usage.wait(timeout: 30).0 == 2)
        let format = try AetherProcess(["serve", "--dir", store, "--port", "0", "--log-format", "xml"])
        #expect(try format.wait(timeout: 30).0 == 2)
        let tokens = store + "/tokens"
        #expect(FileManager.default.createFile(atPath: tokens, contents: Data("alice:secret-token-0123456789\n".utf8)))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: tokens)
        let open = try AetherProcess(["serve", "--dir", store + "/s", "--port", "0", "--tokens", tokens])
        let (openStatus, _, openErr) = try open.wait(timeout: 30)
        #expect(openStatus == 1)
        #expect(openErr.contains("by its group or other users"))
        #expect(!openErr.contains("secret-token"))
        // A token shared by two names: exit 1 naming the line, never the token.
        #expect(
            FileManager.default.createFile(
                atPath: tokens, contents: Data("alice:secret-token-0123456789\nbob:secret-token-0123456789\n".utf8)))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tokens)
        let shared = try AetherProcess(["serve", "--dir", store + "/t", "--port", "0", "--tokens", tokens])
        let (sharedStatus, _, sharedErr) = try shared.wait(timeout: 30)
        #expect(sharedStatus == 1)
        #expect(sharedErr.contains("line 2"))
        #expect(!sharedErr.contains("secret-token"))
    }
}
