import AetherIO
import Foundation
import Testing

/// A writer process appending to a file in bursts (it holds the file open, then closes it).
final class BurstWriter: @unchecked Sendable {
    // @unchecked: Process is used from the creating test only.
    let process = Process()

    /// Appends `bursts` bursts of `size` seeded bytes to `path`, `gap` seconds apart, then closes the file.
    init(path: String, bursts: Int, size: Int, gap: Double, seed: Int) throws {
        let script = """
            import random, sys, time
            path, bursts, size, gap, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
            rnd = random.Random(seed)
            with open(path, 'ab') as f:
                for i in range(bursts):
                    f.write(rnd.randbytes(size + rnd.randrange(size)))
                    f.flush()
                    time.sleep(gap)
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, path, String(bursts), String(size), String(gap), String(seed)]
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    func wait() throws {
        try SessionLive.wait("the writer to finish", timeout: 120) { !process.isRunning }
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

/// `aether upload --follow` while another process still writes the file: into `aether serve` (native), the IETF
/// peer and moto (S3) the stored object equals the final file; kill -9 mid-follow and the same command finishes
/// it; a file truncated while followed fails with the typed error and nothing is completed; tus works where the
/// server offers creation-defer-length and otherwise fails with the typed message.
@Suite(.serialized) struct FollowLiveTests {
    static func emptyFile() throws -> (path: String, state: String) {
        let directory = try SessionLive.temporaryDirectory()
        let path = directory + "/growing.bin"
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        return (path, directory + "/state")
    }

    static func contents(_ path: String) -> [UInt8] {
        FileManager.default.contents(atPath: path).map { Array($0) } ?? []
    }

    static func completed(_ child: UploadChild) throws -> [String: Any] {
        try #require(
            child.events.last { $0["event"] as? String == "completed" },
            "no completed event: \(child.stdout) \(child.stderr)")
    }

    static func storedObject(_ served: ReceiverInteropTests.Served, _ location: String) -> [UInt8] {
        let id = location.split(separator: "/").last.map(String.init) ?? ""
        return contents(served.store + "/objects/" + id)
    }

    @Test func aGrowingFileIsStoredWholeByTheNativeReceiver() throws {
        let served = try ReceiverInteropTests.Served()
        defer { served.process.stop() }
        let (path, state) = try Self.emptyFile()
        let writer = try BurstWriter(path: path, bursts: 10, size: 150_000, gap: 0.25, seed: 1)
        let child = try UploadChild([
            "upload", "--follow", "--follow-idle", "1", path, served.url + "/uploads", "--state-dir", state, "--json",
            "--chunk-size", "256K",
        ])
        try writer.wait()
        #expect(try child.wait() == 0, "\(child.stderr)")
        let done = try Self.completed(child)
        let final = Self.contents(path)
        #expect(done["size"] as? Int == final.count)
        #expect(done["sha256"] as? String == SHA256.hash(final).hex)
        #expect(Self.storedObject(served, try #require(done["location"] as? String)) == final)
        // Progress while following has no total yet.
        #expect(child.events.contains { $0["event"] as? String == "progress" && $0["following"] as? Bool == true })
    }

    @Test func aGrowingFileIsStoredWholeByTheIETFPeer() throws {
        let peer = try IETFPeerProcess.get()
        let (path, state) = try Self.emptyFile()
        let writer = try BurstWriter(path: path, bursts: 8, size: 60_000, gap: 0.2, seed: 2)
        let child = try UploadChild([
            "upload", "--follow", "--follow-idle", "1", path, peer.creationURL("normal"), "--state-dir", state,
            "--json", "--chunk-size", "64K",
        ])
        try writer.wait()
        #expect(try child.wait() == 0, "\(child.stderr)")
        let location = try #require(try Self.completed(child)["location"] as? String)
        #expect(peer.stored(location) == Self.contents(path))
    }

    @Test func aGrowingFileIsStoredWholeByMotoS3() throws {
        let peer = try S3PeerProcess.get()
        let (path, state) = try Self.emptyFile()
        let writer = try BurstWriter(path: path, bursts: 6, size: 1_500_000, gap: 0.2, seed: 3)
        let key = "follow/\(UUID().uuidString).bin"
        let child = try UploadChild(
            [
                "upload", "--follow", "--follow-idle", "1", path, "s3://\(peer.bucket)/\(key)", "--endpoint",
                peer.endpoint, "--state-dir", state, "--json",
            ],
            environment: [
                "AWS_ACCESS_KEY_ID": peer.accessKeyID, "AWS_SECRET_ACCESS_KEY": peer.secretAccessKey,
                "AWS_REGION": "us-east-1",
            ])
        try writer.wait()
        #expect(try child.wait() == 0, "\(child.stderr)")
        _ = try Self.completed(child)
        let final = Self.contents(path)
        let object = try peer.object(key)
        #expect(object.size == final.count)
        #expect(object.sha256 == SHA256.hash(final).hex)
    }

    @Test func killingTheFollowerAndRunningTheSameCommandFinishesTheUpload() throws {
        let served = try ReceiverInteropTests.Served()
        defer { served.process.stop() }
        let (path, state) = try Self.emptyFile()
        let writer = try BurstWriter(path: path, bursts: 16, size: 120_000, gap: 0.25, seed: 4)
        let arguments = [
            "upload", "--follow", "--follow-idle", "1", path, served.url + "/uploads", "--state-dir", state, "--json",
            "--chunk-size", "64K",
        ]
        let first = try UploadChild(arguments)
        try SessionLive.wait("acknowledged parts", timeout: 60) {
            first.events.filter { $0["event"] as? String == "chunk" }.count >= 4 || !first.process.isRunning
        }
        first.signal(SIGKILL)
        _ = try first.wait()
        let second = try UploadChild(arguments)
        try writer.wait()
        #expect(try second.wait() == 0, "\(second.stderr)")
        let resume = try #require(second.events.first { $0["event"] as? String == "resume" })
        #expect(resume["level"] as? Int == 2)
        #expect((resume["reused_parts"] as? Int ?? 0) >= 4)
        // The resumed follower names its tier (loopback: ultrafast), as the first run did, never "-".
        let tiers = Set(
            second.events.filter { $0["event"] as? String == "progress" }.compactMap { $0["tier"] as? String })
        #expect(tiers == ["ultrafast"], "\(tiers)")
        let done = try Self.completed(second)
        let final = Self.contents(path)
        #expect(Self.storedObject(served, try #require(done["location"] as? String)) == final)
    }

    @Test func aKilledFollowerIsFollowedAgainByAetherResumeWithItsID() throws {
        let served = try ReceiverInteropTests.Served()
        defer { served.process.stop() }
        let (path, state) = try Self.emptyFile()
        let writer = try BurstWriter(path: path, bursts: 16, size: 120_000, gap: 0.25, seed: 5)
        let first = try UploadChild([
            "upload", "--follow", "--follow-idle", "1", path, served.url + "/uploads", "--state-dir", state, "--json",
            "--chunk-size", "64K",
        ])
        try SessionLive.wait("acknowledged parts", timeout: 60) {
            first.events.filter { $0["event"] as? String == "chunk" }.count >= 4 || !first.process.isRunning
        }
        let id = try #require(first.events.compactMap { $0["id"] as? String }.first)
        first.signal(SIGKILL)
        _ = try first.wait()
        let second = try UploadChild(["resume", id, "--follow-idle", "1", "--state-dir", state, "--json"])
        try writer.wait()
        #expect(try second.wait() == 0, "\(second.stderr)")
        let resume = try #require(second.events.first { $0["event"] as? String == "resume" })
        #expect(resume["level"] as? Int == 2)
        #expect((resume["reused_parts"] as? Int ?? 0) >= 4)
        // The resumed follower names its tier (loopback: ultrafast), as the first run did, never "-".
        let tiers = Set(
            second.events.filter { $0["event"] as? String == "progress" }.compactMap { $0["tier"] as? String })
        #expect(tiers == ["ultrafast"], "\(tiers)")
        let done = try Self.completed(second)
        #expect(Self.storedObject(served, try #require(done["location"] as? String)) == Self.contents(path))
    }

    @Test func aFileTruncatedWhileFollowedFailsAndNothingIsCompleted() throws {
        let served = try ReceiverInteropTests.Served()
        defer { served.process.stop() }
        let (path, state) = try Self.emptyFile()
        try Data(repeating: 0x5A, count: 900_000).write(to: URL(fileURLWithPath: path))
        let child = try UploadChild([
            "upload", "--follow", "--follow-idle", "30", path, served.url + "/uploads", "--state-dir", state, "--json",
            "--chunk-size", "64K",
        ])
        try SessionLive.wait("acknowledged parts", timeout: 60) {
            child.events.contains { $0["event"] as? String == "chunk" } || !child.process.isRunning
        }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.truncateFile(atOffset: 1000)
        handle.closeFile()
        #expect(try child.wait() == 1)
        let failed = try #require(child.events.last { $0["event"] as? String == "failed" }, "\(child.stdout)")
        #expect((failed["message"] as? String ?? "").contains("fileTruncated"))
        let objects = (try? FileManager.default.contentsOfDirectory(atPath: served.store + "/objects")) ?? []
        #expect(objects.isEmpty)
    }

    @Test func followOverTusWorksWithDeferredLengthOrFailsWithTheTypedMessage() throws {
        let peer = try TusPeerProcess.get()
        let (path, state) = try Self.emptyFile()
        let writer = try BurstWriter(path: path, bursts: 5, size: 80_000, gap: 0.2, seed: 5)
        let child = try UploadChild([
            "upload", "--follow", "--follow-idle", "1", path, peer.tusURL("files"), "--state-dir", state, "--json",
            "--chunk-size", "256K",
        ])
        try writer.wait()
        let status = try child.wait()
        if status == 0 {
            let location = try #require(try Self.completed(child)["location"] as? String)
            #expect(try peer.storedOnTusServer("files", location) == Self.contents(path))
        } else {
            #expect(status == 1)
            let failed = try #require(child.events.last { $0["event"] as? String == "failed" }, "\(child.stdout)")
            let message = failed["message"] as? String ?? ""
            #expect(message.contains("followUnsupported"), "\(message)")
            #expect(message.contains("creation-defer-length"), "\(message)")
        }
    }

    @Test func followRefusesParityAndAnIdleTimeWithoutFollow() throws {
        let (path, state) = try Self.emptyFile()
        let (parity, first) = try UploadChild.run([
            "upload", "--follow", "--parity", path, "http://127.0.0.1:9/uploads", "--state-dir", state,
        ])
        #expect(parity == 2)
        #expect(first.stderr.contains("--parity cannot be used with --follow"))
        let (idle, second) = try UploadChild.run([
            "upload", "--follow-idle", "3", path, "http://127.0.0.1:9/uploads", "--state-dir", state,
        ])
        #expect(idle == 2)
        #expect(second.stderr.contains("--follow-idle needs --follow"))
        let (help, third) = try UploadChild.run(["help", "upload"])
        #expect(help == 0)
        #expect(third.stdout.contains("--follow"))
        #expect(third.stdout.contains("exit status:"))
    }
}
