import AetherIO
import Foundation
import Testing

/// Resume across the awkward cases of issue 17, through `aether upload` against `aether serve`: the file changed
/// between runs, the receiver restarted between runs, the snapshot damaged.
@Suite(.serialized) struct UploadResumeEdgeLiveTests: SeededContent {
    /// `aether serve` on `store`, on `port` (0: the kernel picks); its URL once it listens.
    static func serve(store: String, port: Int = 0) throws -> (UploadChild, String) {
        let child = try UploadChild(["serve", "--dir", store, "--port", String(port)])
        var url: String?
        try SessionLive.wait("aether serve to listen", timeout: 30) {
            url = child.stdout.split(separator: "\n").first { $0.hasPrefix("listening on ") }
                .map { String($0.dropFirst("listening on ".count)) }
            return url != nil || !child.process.isRunning
        }
        return (child, try #require(url, "aether serve did not start: \(child.stderr)"))
    }

    static func object(_ store: String, _ done: [String: Any]) throws -> [UInt8] {
        let location = try #require(done["location"] as? String)
        let id = String(location.split(separator: "/").last ?? "")
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: store + "/objects/" + id)))
    }

    static func arguments(_ path: String, _ url: String, _ state: String) -> [String] {
        [
            "upload", path, url + "/uploads", "--state-dir", state, "--json", "--chunk-size", "256K", "--parallel",
            "2", "--protocol", "native",
        ]
    }

    static func resume(_ child: UploadChild) throws -> [String: Any] {
        try #require(child.events.first { $0["event"] as? String == "resume" }, "\(child.stdout) \(child.stderr)")
    }

    /// Ctrl-C before the destination created the upload keeps nothing, and says so instead of naming an
    /// `aether resume` that would not find it (it used to); the same command then starts and finishes it.
    @Test func aPauseBeforeTheUploadExistsSaysNothingIsKept() throws {
        let store = try SessionLive.temporaryDirectory() + "/store"
        let (server, url) = try Self.serve(store: store)
        defer { withExtendedLifetime(server) {} }
        let directory = try SessionLive.temporaryDirectory()
        let path = directory + "/input.bin"
        let content = Self.bytes(5000, seed: 90)
        try Data(content).write(to: URL(fileURLWithPath: path))
        // At one byte a second the creation request's body takes minutes: the pause lands before it is answered.
        let arguments = ["upload", path, url + "/uploads", "--state-dir", directory + "/state", "--flags", "-dedup"]
        let child = try UploadChild(arguments + ["--max-rate", "1"])
        // Nothing is printed before the creation is answered: the probe and the start take milliseconds, so 3 s
        // is well inside the creation's crawl.
        usleep(3_000_000)
        #expect(child.process.isRunning)
        child.signal(SIGINT)
        #expect(try child.wait() == 3, "\(child.stderr)")
        #expect(child.stderr.contains("nothing is kept"), "\(child.stderr)")
        #expect(!child.stderr.contains("aether resume"))
        #expect(try UploadChild.run(["status", "--state-dir", directory + "/state"]).1.stdout.contains("no uploads"))
        let (again, second) = try UploadChild.run(arguments + ["--json"])
        #expect(again == 0, "\(second.stderr)")
        #expect(try Self.object(store, try UploadCommandLiveTests.completed(second)) == content)
    }

    @Test func aFileChangedBetweenRunsFailsLevelOneAndTheStoredObjectIsTheNewFileNeverAMix() throws {
        let store = try SessionLive.temporaryDirectory() + "/store"
        let (server, url) = try Self.serve(store: store)
        defer { withExtendedLifetime(server) {} }
        let (path, state, _) = try UploadCommandLiveTests.file(8 << 20, seed: 901)
        let arguments = Self.arguments(path, url, state)
        let (killed, first) = try UploadCommandLiveTests.interrupt(arguments, after: 12, with: SIGKILL)
        #expect(killed == SIGKILL || killed == 128 + SIGKILL)
        let sent = first.events.filter { $0["event"] as? String == "chunk" }.count
        #expect(sent >= 12)

        // Another writer replaces a byte in a part that was already acknowledged, and one near the end.
        var changed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        changed[300_000] ^= 0xff
        changed[changed.count - 10] ^= 0x01
        try Data(changed).write(to: URL(fileURLWithPath: path))

        let (status, second) = try UploadChild.run(arguments)
        #expect(status == 0, "\(second.stderr)")
        let resume = try Self.resume(second)
        #expect(resume["level"] as? Int == 0)
        #expect((resume["reason"] as? String)?.contains("level 1") == true)
        #expect(second.events.filter { $0["event"] as? String == "chunk" }.count == 32)
        #expect(try Self.object(store, try UploadCommandLiveTests.completed(second)) == changed)
    }

    @Test func aFileChangedInPlaceWithItsTimeKeptIsNeverReportedAsStoredWhenTheObjectIsAMix() throws {
        let store = try SessionLive.temporaryDirectory() + "/store"
        let (server, url) = try Self.serve(store: store)
        defer { withExtendedLifetime(server) {} }
        let (path, state, _) = try UploadCommandLiveTests.file(8 << 20, seed: 902)
        let arguments = Self.arguments(path, url, state)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        _ = try UploadCommandLiveTests.interrupt(arguments, after: 12, with: SIGKILL)

        // The same size, inode and first 4 KiB, the modification time put back: only the bytes tell.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 300_000)
        try handle.write(contentsOf: Data([0x42, 0x42, 0x42]))
        try handle.close()
        try FileManager.default.setAttributes(
            [.modificationDate: try #require(attributes[.modificationDate])], ofItemAtPath: path)
        let changed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))

        let (status, second) = try UploadChild.run(arguments)
        print("file changed with its time kept: exit \(status), \(second.stderr)")
        if status == 0 {
            // Success may only be claimed for exactly the file as it is now.
            #expect(try Self.object(store, try UploadCommandLiveTests.completed(second)) == changed)
        } else {
            // Or the upload refuses with a typed failure naming the change (exit 1) or a receipt mismatch (4).
            #expect(status == 1 || status == 4, "\(second.stderr)")
            #expect(!second.events.contains { $0["event"] as? String == "completed" })
        }
    }

    @Test func theReceiverRestartedBetweenRunsStillHoldsWhatItAcknowledgedAndTheUploadFinishes() throws {
        let store = try SessionLive.temporaryDirectory() + "/store"
        var (server, url) = try Self.serve(store: store)
        let port = try #require(Int(url.split(separator: ":").last ?? ""))
        let (path, state, content) = try UploadCommandLiveTests.file(8 << 20, seed: 903)
        let arguments = Self.arguments(path, url, state)
        _ = try UploadCommandLiveTests.interrupt(arguments, after: 10, with: SIGKILL)
        server.signal(SIGKILL)
        _ = try server.wait()
        (server, url) = try Self.serve(store: store, port: port)
        defer { withExtendedLifetime(server) {} }

        let (status, second) = try UploadChild.run(arguments)
        #expect(status == 0, "\(second.stderr)")
        let resume = try Self.resume(second)
        #expect((resume["level"] as? Int ?? 0) >= 2)
        #expect((resume["reused_parts"] as? Int ?? 0) >= 10)
        #expect(try Self.object(store, try UploadCommandLiveTests.completed(second)) == content)
    }

    @Test func aDamagedSnapshotIsReportedByNameAndTheUploadStartsAfreshAndFinishes() throws {
        let store = try SessionLive.temporaryDirectory() + "/store"
        let (server, url) = try Self.serve(store: store)
        defer { withExtendedLifetime(server) {} }
        let (path, state, content) = try UploadCommandLiveTests.file(4 << 20, seed: 904)
        let arguments = Self.arguments(path, url, state)
        _ = try UploadCommandLiveTests.interrupt(arguments, after: 6, with: SIGKILL)
        let snapshots = state + "/snapshots"
        let names = try FileManager.default.contentsOfDirectory(atPath: snapshots).filter { !$0.hasPrefix(".") }
        #expect(names.count == 1)
        let snapshot = snapshots + "/" + (try #require(names.first))
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: snapshot)))
        bytes[bytes.count / 2] ^= 0x5a
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: snapshot))
        try handle.write(contentsOf: Data(bytes))
        try handle.close()

        let (status, second) = try UploadChild.run(arguments)
        #expect(status == 0, "\(second.stdout) \(second.stderr)")
        let resume = try Self.resume(second)
        #expect(resume["level"] as? Int == 0)
        let reason = try #require(resume["reason"] as? String)
        #expect(reason.contains(try #require(names.first)))
        #expect(second.events.filter { $0["event"] as? String == "chunk" }.count == 16)
        #expect(try Self.object(store, try UploadCommandLiveTests.completed(second)) == content)
    }
}
