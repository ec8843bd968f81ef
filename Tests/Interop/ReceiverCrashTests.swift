import AetherIO
import AetherTransport
import Foundation
import Testing

/// Crash safety of `aether serve`: 20 IETF uploads while the receiver is killed with SIGKILL at seeded moments and
/// restarted on the same store; every upload resumes from the receiver's offset and completes byte-identical, no
/// acknowledged byte is lost, no partial object is ever visible, and the catalogue passes `PRAGMA
/// integrity_check`.
@Suite struct ReceiverCrashTests: SeededContent {
    static let uploads = 20
    static let size = 160 * 1024
    static let partSize: Int64 = 16 * 1024

    final class Upload: @unchecked Sendable {
        // @unchecked: used from the test's own task only.
        let content: [UInt8]
        var path: String?
        var acknowledged: Int64 = 0
        var complete = false
        init(content: [UInt8]) { self.content = content }
    }

    static func start(store: String) throws -> (AetherProcess, String) {
        let process = try AetherProcess(
            ["serve", "--dir", store, "--port", "0"], inputBytes: [], keepInputOpen: true)
        var url: String?
        try SessionLive.wait("aether serve to listen", timeout: 30) {
            url = process.stdout.split(separator: "\n").first { $0.hasPrefix("listening on ") }
                .map { String($0.dropFirst("listening on ".count)) }
            return url != nil || !process.process.isRunning
        }
        guard let url else { throw PythonPeer.PeerError(message: "no URL: \(process.stderr)") }
        return (process, url)
    }

    static func description(_ upload: Upload, _ layout: PartLayout) -> UploadDescription {
        UploadDescription(
            size: Int64(size), layout: layout, contentType: nil, chainSessionID: "crash",
            sha256: SHA256.hash(upload.content))
    }

    static func part(_ index: Int, _ content: [UInt8], _ layout: PartLayout) -> UploadPart {
        let range = layout.range(ofPart: index)
        let bytes = Array(content[Int(range.lowerBound)..<Int(range.upperBound)])
        return UploadPart(
            index: index, offset: range.lowerBound, body: .bytes(bytes), length: Int64(bytes.count),
            sha256: SHA256.hash(bytes), crc32c: CRC32C.checksum(bytes))
    }

    /// Advances every upload one step at a time until all are complete or a request fails (the receiver died).
    static func work(
        _ uploads: [Upload], url: String, client: HTTPClient, acknowledged: @escaping () -> Void = {}
    ) async {
        do {
            let backend = try await IETFResumableBackend.discover(
                creationURL: url + "/uploads", client: client, version: .latest)
            let layout = try PartLayout(
                objectSize: Int64(size), preferred: partSize, capabilities: backend.capabilities, alignment: 1)
            for upload in uploads where !upload.complete {
                let remote: RemoteUpload
                if let path = upload.path {
                    remote = RemoteUpload(location: url + path, uploadID: nil, size: Int64(size), partSize: partSize)
                } else {
                    remote = try await backend.create(description(upload, layout))
                    upload.path = String(remote.location.dropFirst(url.count))
                }
                guard case .offset(let offset, let done) = try await backend.progress(of: remote) else { return }
                // Nothing acknowledged is ever lost.
                #expect(offset >= upload.acknowledged)
                if done {
                    upload.complete = true
                    continue
                }
                var index = Int(offset / partSize)
                while index < layout.partCount {
                    _ = try await backend.send(part(index, upload.content, layout), to: remote)
                    upload.acknowledged = layout.range(ofPart: index).upperBound
                    acknowledged()
                    index += 1
                }
                _ = try await backend.complete(
                    remote, summary: CompletionSummary(parts: [], fileSHA256: SHA256.hash(upload.content)))
                upload.complete = true
            }
        } catch {
            return
        }
    }

    @Test func killNineAtSeededMomentsLosesNothingAcknowledged() async throws {
        let store = try SessionLive.temporaryDirectory() + "/store"
        let uploads = (0..<Self.uploads).map { Upload(content: Self.bytes(Self.size, seed: UInt64($0 + 500))) }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        var generator = SplitMix64(seed: 2026)
        // Eight rounds are killed at seeded points (after a seeded number of acknowledged parts, plus a seeded
        // 0-4 ms, so the kill lands between requests or inside one); a last round finishes the uploads.
        var kills = 0
        for round in 0..<9 {
            let (process, url) = try Self.start(store: store)
            let pid = process.process.processIdentifier
            let killing = round < 8
            let target = 1 + Int(generator.next() % 25)
            let extraMicroseconds = UInt32(generator.next() % 5000)
            var count = 0
            await Self.work(uploads, url: url, client: client) {
                count += 1
                guard killing, count == target else { return }
                Thread {
                    usleep(extraMicroseconds)
                    kill(pid, SIGKILL)
                }.start()
            }
            if killing {
                kill(pid, SIGKILL)
                kills += 1
            }
            process.stop()
            if killing { #expect(process.process.terminationReason == .uncaughtSignal) }
            // No partial object is visible: an object file is always the whole upload.
            for upload in uploads {
                guard let path = upload.path, let id = path.split(separator: "/").last,
                    let stored = FileManager.default.contents(atPath: store + "/objects/" + id)
                else { continue }
                #expect(SHA256.hash(Array(stored)) == SHA256.hash(upload.content))
            }
        }
        #expect(kills == 8)
        #expect(uploads.allSatisfy { $0.complete })
        for upload in uploads {
            let id = try #require(upload.path?.split(separator: "/").last)
            let stored = FileManager.default.contents(atPath: store + "/objects/" + id)
            #expect(stored.map { SHA256.hash(Array($0)) } == SHA256.hash(upload.content))
        }
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        check.arguments = [
            "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
            store + "/catalog.sqlite3",
        ]
        let output = Pipe()
        check.standardOutput = output
        try check.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        check.waitUntilExit()
        #expect(text == "ok\n")
        try? FileManager.default.removeItem(atPath: store)
    }
}
