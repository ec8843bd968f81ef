import Foundation
import Testing

@testable import aether_bench

/// The bench's Python peer script against the real tuspyserver (from the project's `.venv`): a tuspy upload cut
/// after its first chunk resumes from the server's offset, the path every path change of the lab's mobile lines
/// takes. tuspyserver answers that HEAD with 400 unless the upload was created with a filename and a filetype.
@Suite(.enabled(if: PeerVenv.python != nil, "the Python venv is missing (scripts/setup-venv.sh)"))
struct E2EPeerScriptTests {
    /// A port nothing listens on now, on 127.0.0.1 (the script's servers take a number, not 0).
    static func freePort() throws -> Int {
        let probe = try BenchChild(
            [
                "/usr/bin/python3", "-c",
                "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])",
            ], logs: NSTemporaryDirectory() + "aether-port-\(UUID().uuidString)")
        probe.process.waitUntilExit()
        guard let port = Int(probe.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchError("no port: \(probe.output)")
        }
        return port
    }

    @Test func aTuspyUploadCutAfterItsFirstChunkResumesFromTheServersOffset() async throws {
        let python = try #require(PeerVenv.python)
        let directory = NSTemporaryDirectory() + "aether-peer-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = directory + "/e2e_peer.py"
        try Data(E2EPeerScript.text.utf8).write(to: URL(fileURLWithPath: script))
        let port = try Self.freePort()
        let server = try BenchChild(
            [python, script, "tus", "127.0.0.1", "\(port)", directory + "/store"], logs: directory + "/tus")
        defer { server.stop() }
        _ = try await server.waitForLine(startingWith: "ready", timeout: 60, what: "tuspyserver")

        // A chunk and a half (8 MiB chunks): the first is sent, then a new uploader resumes as the script does.
        let file = directory + "/upload.bin"
        try IOBench.makeRandomFile(file, size: 12 << 20)
        let check = """
            import sys
            sys.path.insert(0, sys.argv[1])
            import e2e_peer
            from tusclient import client
            tus_client = client.TusClient(sys.argv[2])
            first = e2e_peer.tus_uploader(tus_client, sys.argv[3], None)
            first.upload_chunk()
            resumed = e2e_peer.tus_uploader(tus_client, sys.argv[3], first.url)
            print("offset", resumed.offset, flush=True)
            resumed.upload()
            print("done", resumed.offset, flush=True)
            """
        let client = try BenchChild(
            [python, "-c", check, directory, "http://127.0.0.1:\(port)/files/", file], logs: directory + "/client")
        let finish = await client.finish(deadline: client.started + 120)
        #expect(!finish.stopped)
        #expect(finish.status == 0, "\(client.errorTail)")
        #expect(finish.output == "offset \(8 << 20)\ndone \(12 << 20)\n")
    }
}

/// The project's `.venv` Python (scripts/setup-venv.sh), if it is there.
enum PeerVenv {
    static let python: String? = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let path = root + "/.venv/bin/python"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()
}
