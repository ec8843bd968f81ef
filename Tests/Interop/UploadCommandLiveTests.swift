import AetherIO
import AetherTestSupport
import Foundation
import Testing

/// An `aether upload|status|resume` child with its own environment; output in files, read while it runs.
final class UploadChild: @unchecked Sendable {
    // @unchecked: Process is used from the creating test only; the files are read after writes land.
    let process = Process()
    let directory: String

    /// `launcher` runs `aether` through another program (`["/usr/sbin/ip", "netns", "exec", NAME]`).
    init(_ arguments: [String], environment: [String: String] = [:], launcher: [String] = []) throws {
        directory = try SessionLive.temporaryDirectory()
        _ = FileManager.default.createFile(atPath: directory + "/out", contents: nil)
        _ = FileManager.default.createFile(atPath: directory + "/err", contents: nil)
        process.executableURL = URL(fileURLWithPath: launcher.first ?? SessionLive.aetherPath)
        process.arguments = launcher.isEmpty ? arguments : launcher.dropFirst() + [SessionLive.aetherPath] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle(forWritingAtPath: directory + "/out")
        process.standardError = FileHandle(forWritingAtPath: directory + "/err")
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var stdout: String { (try? String(contentsOfFile: directory + "/out", encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: directory + "/err", encoding: .utf8)) ?? "" }

    /// The `--json` events printed so far.
    var events: [[String: Any]] {
        stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    func wait(timeout: Double = 120) throws -> Int32 {
        try SessionLive.wait("aether \(process.arguments?.first ?? "") to exit", timeout: timeout) {
            !process.isRunning
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Waits for the exit as `wait` does, but asleep between looks instead of holding one of Swift's cooperative
    /// threads (two on a 2-core machine): for tests that wait minutes, whose blocking wait starved the process
    /// suites' async tests (a peer's 60 s start-up wait ran out unscheduled).
    func exited(timeout: Double) async throws -> Int32 {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                throw SessionLive.Failure(
                    description: "timed out waiting for aether \(process.arguments?.first ?? "") to exit")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Sends `number` to the child while it runs; never to a pid the child no longer holds (once it has exited and
    /// been reaped, the number may name another process, or a thread of this one).
    func signal(_ number: Int32) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, number)
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, UploadChild) {
        let child = try UploadChild(arguments, environment: environment)
        return (try child.wait(), child)
    }
}

@Suite(.serialized) struct UploadCommandLiveTests: SeededContent {
    /// A file of `count` seeded bytes in a fresh directory, and a state directory beside it.
    static func file(_ count: Int, seed: UInt64) throws -> (path: String, state: String, content: [UInt8]) {
        let directory = try SessionLive.temporaryDirectory()
        let content = Self.bytes(count, seed: seed)
        try Data(content).write(to: URL(fileURLWithPath: directory + "/input.bin"))
        return (directory + "/input.bin", directory + "/state", content)
    }

    static func completed(_ child: UploadChild) throws -> [String: Any] {
        try #require(
            child.events.last { $0["event"] as? String == "completed" },
            "no completed event: \(child.stdout) \(child.stderr)")
    }

    @Test func anUploadToTuspyserverIsByteIdentical() throws {
        let peer = try TusPeerProcess.get()
        let (path, state, content) = try Self.file(1_500_000, seed: 71)
        let (status, child) = try UploadChild.run([
            "upload", path, peer.tusURL("files"), "--state-dir", state, "--json", "--chunk-size", "256K",
        ])
        #expect(status == 0, "\(child.stderr)")
        let done = try Self.completed(child)
        let location = try #require(done["location"] as? String)
        #expect(try peer.storedOnTusServer("files", location) == content)
        #expect(done["sha256"] as? String == SHA256.hash(content).hex)
        #expect(child.events.contains { $0["event"] as? String == "resume" && $0["level"] as? Int == 0 })
    }

    @Test func anUploadToTheIETFPeerIsByteIdentical() throws {
        let peer = try IETFPeerProcess.get()
        let (path, state, content) = try Self.file(700_001, seed: 72)
        let (status, child) = try UploadChild.run([
            "upload", path, peer.creationURL("normal"), "--state-dir", state, "--json", "--chunk-size", "64K",
        ])
        #expect(status == 0, "\(child.stderr)")
        let location = try #require(try Self.completed(child)["location"] as? String)
        #expect(peer.stored(location) == content)
    }

    @Test func anUploadToMotoS3IsByteIdentical() throws {
        let peer = try S3PeerProcess.get()
        let (path, state, content) = try Self.file((5 << 20) + 12_345, seed: 73)
        let key = "cli/\(UUID().uuidString).bin"
        let (status, child) = try UploadChild.run(
            [
                "upload", path, "s3://\(peer.bucket)/\(key)", "--endpoint", peer.endpoint, "--state-dir", state,
                "--json",
            ],
            environment: [
                "AWS_ACCESS_KEY_ID": peer.accessKeyID, "AWS_SECRET_ACCESS_KEY": peer.secretAccessKey,
                "AWS_REGION": "us-east-1",
            ])
        #expect(status == 0, "\(child.stderr)")
        _ = try Self.completed(child)
        let object = try peer.object(key)
        #expect(object.size == content.count)
        #expect(object.sha256 == SHA256.hash(content).hex)
    }

    /// `aether upload` to Ceph RGW: byte-identical, and the completed line lists only the checks made. With
    /// `--s3-flavor ceph` RGW recomputed every part's signed SHA-256; without it the endpoint is an unknown server and
    /// only the client's ETag comparisons count. No CRC32C check is ever claimed (RGW 16.2 ignores them).
    @Test(arguments: ["ceph", nil] as [String?])
    func anUploadToRGWListsOnlyTheChecksItMade(flavor: String?) throws {
        let rgw = try RGWPeer.get()
        // Three parts: an endpoint on this host starts as ULTRAFAST, whose parts are 16 MiB.
        let (path, state, content) = try Self.file(2 * (16 << 20) + 4_321, seed: 75)
        let key = "cli/\(UUID().uuidString).bin"
        let (status, child) = try UploadChild.run(
            [
                "upload", path, "s3://\(RGWPeer.bucket)/\(key)", "--endpoint", rgw.endpoint, "--state-dir", state,
                "--json",
            ] + (flavor.map { ["--s3-flavor", $0] } ?? []),
            environment: rgw.server.credentialsEnvironment)
        #expect(status == 0, "\(child.stderr)")
        let checks = try #require(try Self.completed(child)["checks"] as? [[String: Any]])
        let made = Set(checks.map { "\($0["by"] ?? "")/\($0["check"] ?? "")" })
        #expect(checks.allSatisfy { $0["parts"] as? Int == 3 && $0["of"] as? Int == 3 }, "\(checks)")
        if flavor == "ceph" {
            #expect(made == ["server/part-sha256", "client/object-etag"], "\(made)")
        } else {
            #expect(made == ["client/part-etag-md5", "client/object-etag"], "\(made)")
        }
        let object = try rgw.object(key)
        #expect(object.size == content.count)
        #expect(object.sha256 == SHA256.hash(content).hex)
        let (refused, usage) = try UploadChild.run(
            ["upload", path, "s3://\(RGWPeer.bucket)/\(key)", "--endpoint", rgw.endpoint, "--s3-flavor", "rgw"])
        #expect(refused == 2, "\(usage.stderr)")
        #expect(usage.stderr.contains("--s3-flavor takes aws, r2, minio, ceph or unknown"))
    }

    /// Interrupts `aether upload` once `acknowledged` parts were acknowledged, with `signal`; returns the exit status.
    static func interrupt(_ arguments: [String], after acknowledged: Int, with number: Int32) throws -> (
        Int32, UploadChild
    ) {
        let child = try UploadChild(arguments)
        try SessionLive.wait("\(acknowledged) acknowledged parts", timeout: 60) {
            child.events.filter { $0["event"] as? String == "chunk" }.count >= acknowledged || !child.process.isRunning
        }
        child.signal(number)
        return (try child.wait(), child)
    }

    @Test func ctrlCPausesAndTheSameCommandResumesWithoutResendingStoredParts() throws {
        let peer = try IETFPeerProcess.get()
        let (path, state, content) = try Self.file(6_000_000, seed: 74)
        let arguments = [
            "upload", path, peer.creationURL("normal"), "--state-dir", state, "--json", "--chunk-size", "16K",
        ]
        let (status, first) = try Self.interrupt(arguments, after: 20, with: SIGINT)
        #expect(status == 3, "\(first.stdout) \(first.stderr)")
        let paused = try #require(first.events.last)
        #expect(paused["event"] as? String == "paused")
        let id = try #require(paused["id"] as? String)
        #expect((paused["message"] as? String)?.contains("aether resume \(id)") == true)
        let sentBefore = first.events.filter { $0["event"] as? String == "chunk" }.count

        let (status2, listed) = try UploadChild.run(["status", "--state-dir", state])
        #expect(status2 == 0)
        #expect(listed.stdout.contains(id))

        let (resumed, second) = try UploadChild.run(arguments)
        #expect(resumed == 0, "\(second.stderr)")
        let resume = try #require(second.events.first { $0["event"] as? String == "resume" })
        #expect((resume["level"] as? Int ?? 0) >= 2)
        let reused = try #require(resume["reused_parts"] as? Int)
        #expect(reused >= sentBefore)
        let partCount = (content.count + 16_383) / 16_384
        let sentAfter = second.events.filter { $0["event"] as? String == "chunk" }.count
        #expect(sentAfter == partCount - reused)
        let location = try #require(try Self.completed(second)["location"] as? String)
        #expect(peer.stored(location) == content)
        #expect(try UploadChild.run(["status", "--state-dir", state]).1.stdout.contains(id) == false)
    }

    /// A file named with terminal escapes (a window title, a colour) and a line break: `aether status` lists it on
    /// one line with the controls written as escapes, and an error that quotes such a name does too, so nothing the
    /// name holds reaches the terminal as a control.
    @Test func aFileNamedWithTerminalEscapesIsListedWithTheEscapesShownNotSent() throws {
        let peer = try IETFPeerProcess.get()
        let (plain, state, _) = try Self.file(2_000_000, seed: 79)
        let path = (plain as NSString).deletingLastPathComponent + "/evil\u{1B}]0;pwned\u{07}\u{1B}[31mRED\n.bin"
        try FileManager.default.moveItem(atPath: plain, toPath: path)
        let arguments = [
            "upload", path, peer.creationURL("normal"), "--state-dir", state, "--json", "--chunk-size", "16K",
        ]
        let (status, first) = try Self.interrupt(arguments, after: 4, with: SIGINT)
        #expect(status == 3, "\(first.stdout) \(first.stderr)")
        let (listed, child) = try UploadChild.run(["status", "--state-dir", state])
        #expect(listed == 0)
        let lines = child.stdout.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
        #expect(lines.count == 1, "\(child.stdout)")
        #expect(!child.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(child.stdout.contains("evil\\x1b]0;pwned\\x07\\x1b[31mRED\\n.bin"), "\(child.stdout)")

        let (failed, missing) = try UploadChild.run(["upload", path + "\u{1B}[2J", peer.creationURL("normal")])
        #expect(failed == 1)
        #expect(!missing.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(missing.stderr)")
        #expect(missing.stderr.contains("\\x1b[2J"), "\(missing.stderr)")
    }

    @Test func killDashNineMidwayThenTheSameCommandResumes() throws {
        let peer = try TusPeerProcess.get()
        let (path, state, content) = try Self.file(4_000_000, seed: 75)
        let arguments = [
            "upload", path, peer.tusURL("files"), "--state-dir", state, "--json", "--chunk-size", "16K",
        ]
        let (status, _) = try Self.interrupt(arguments, after: 30, with: SIGKILL)
        #expect(status == SIGKILL || status == 128 + SIGKILL || status == 9)
        let (resumed, second) = try UploadChild.run(arguments)
        #expect(resumed == 0, "\(second.stderr)")
        let resume = try #require(second.events.first { $0["event"] as? String == "resume" })
        #expect((resume["level"] as? Int ?? 0) >= 2)
        #expect((resume["reused_parts"] as? Int ?? 0) >= 30)
        let location = try #require(try Self.completed(second)["location"] as? String)
        #expect(try peer.storedOnTusServer("files", location) == content)
    }

    /// The connections the first parallel requests run on are opened while the file is read: with `--parallel 4`
    /// four are asked for, none failed, and the completed line says so (the rate cap keeps the upload longer than the
    /// warm-up on a busy machine).
    @Test func theFirstStreamsConnectionsAreOpenedWhileTheFileIsRead() throws {
        let (path, state, content) = try Self.file(12_000_000, seed: 77)
        let receiver = try ReceiverChild()
        defer { try? FileManager.default.removeItem(atPath: receiver.store) }
        let (status, child) = try UploadChild.run([
            "upload", path, receiver.url + "/uploads", "--state-dir", state, "--json", "--parallel", "4",
            "--chunk-size", "1M", "--max-rate", "4M",
        ])
        #expect(status == 0, "\(child.stderr)")
        let done = try Self.completed(child)
        let warmed = try #require(done["prewarmed"] as? [String: Any], "\(child.stdout)")
        #expect(warmed["connections"] as? Int == 4)
        // Found open: the detection's connection, and on a busy machine those the upload's first requests opened
        // before the warm-up ran.
        #expect((0...4).contains(warmed["already_warm"] as? Int ?? -1))
        #expect(warmed["failed"] as? Int == 0)
        #expect(try receiver.object(try #require(done["location"] as? String)) == content)
    }

    @Test func helpDocumentsTheExitCodesAndBadArgumentsExitTwo() throws {
        let (help, child) = try UploadChild.run(["help", "upload"])
        #expect(help == 0)
        #expect(child.stdout.contains("3  paused"))
        #expect(child.stdout.contains("4  the destination's receipt does not match"))
        #expect(try UploadChild.run(["upload", "only-one"]).0 == 2)
        #expect(try UploadChild.run(["upload", "a", "b", "--token", "x", "--token-file", "y"]).0 == 2)
        #expect(try UploadChild.run(["upload", "a", "b", "--parallel", "0"]).0 == 2)
        // An empty FILE or DEST is a usage mistake, not a file that cannot be found.
        #expect(try UploadChild.run(["upload", "", "http://127.0.0.1:9/uploads"]).0 == 2)
        #expect(try UploadChild.run(["upload", "a", ""]).0 == 2)
        // `aether resume` takes the rate cap too (it is not kept with the upload).
        #expect(try UploadChild.run(["resume", "--help"]).1.stdout.contains("--max-rate N"))
        let (unknown, resumed) = try UploadChild.run(["resume", "0123abcd", "--max-rate", "1M"])
        #expect(unknown == 1 && resumed.stderr.contains("no kept upload"), "\(resumed.stderr)")
        #expect(try UploadChild.run(["upload", "--help"]).0 == 0)
        let (missing, failed) = try UploadChild.run(["upload", "/nonexistent/file", "s3://bucket/key"])
        #expect(missing == 1)
        #expect(failed.stderr.contains("check the path"))
    }

    /// A receiver that is still starting when the upload begins (the first probe is refused) is waited for: the
    /// upload completes once it listens, byte-identical, instead of failing at the first refused connection.
    @Test func aReceiverThatComesUpSecondsAfterTheUploadStartsIsWaitedFor() throws {
        let (path, state, content) = try Self.file(300_000, seed: 43)
        let first = try ReceiverChild()
        let (port, store) = (first.port, first.store)
        first.child.signal(SIGKILL)
        _ = try first.child.wait()
        let child = try UploadChild(["upload", path, first.url + "/uploads", "--state-dir", state, "--json"])
        Thread.sleep(forTimeInterval: 1.5)
        #expect(child.process.isRunning, "the upload gave up while nothing listened: \(child.stderr)")
        let second = try ReceiverChild(port: port, store: store)
        #expect(try child.wait(timeout: 60) == 0, "\(child.stderr)")
        let done = try Self.completed(child)
        #expect(try second.object(try #require(done["location"] as? String)) == content)
    }

    /// The state directory's file system full (a 64 KiB tmpfs, 56 KiB of it taken, in a mount namespace of the
    /// upload's own): the snapshot cannot be written, and the upload stops with a typed error that names the file
    /// and says to free space, not a crash and not "check the destination".
    @Test func aFullStateDirectoryIsATypedErrorThatSaysToFreeSpace() throws {
        let (path, state, _) = try Self.file(8_000_000, seed: 43)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let receiver = try ReceiverChild()
        defer { try? FileManager.default.removeItem(atPath: receiver.store) }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let mount =
            "mount -t tmpfs -o size=64k,mode=700 tmpfs '\(state)' && head -c 57344 /dev/zero > '\(state)/fill'"
            + " && exec \"$0\" \"$@\""
        let child = try UploadChild(
            ["upload", path, receiver.url + "/uploads", "--state-dir", state, "--quiet", "--chunk-size", "1M"],
            launcher: ["/usr/bin/unshare", "--mount", "/bin/sh", "-c", mount])
        #expect(try child.wait(timeout: 60) == 1, "\(child.stderr)")
        #expect(child.stderr.contains("No space left on device"), "\(child.stderr)")
        #expect(child.stderr.contains("free some space"), "\(child.stderr)")
        #expect(!child.stderr.contains("check the destination"))
        #expect(!child.stderr.contains("Fatal error"))
    }

    /// Each limit runs out at another step (the state directory, the snapshot, the telemetry files, the socket
    /// libcurl needs); every one is a typed error with the same next step, never "check the destination". The
    /// launcher closes every descriptor above 2 first: what the test runner inherited from its own parent (CI's
    /// harness holds some open) would otherwise count against the limit, and the limit measured would be another.
    @Test(arguments: [10, 11, 12, 14, 16])
    func tooFewOpenFilesIsATypedErrorThatSaysToRaiseTheLimit(limit: Int) throws {
        let (path, state, _) = try Self.file(100_000, seed: 41)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let receiver = try ReceiverChild()
        defer { try? FileManager.default.removeItem(atPath: receiver.store) }
        let script =
            "for fd in /proc/$$/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\"; done; "
            + "ulimit -n \(limit) && exec \"$0\" \"$@\""
        let child = try UploadChild(
            ["upload", path, receiver.url + "/uploads", "--state-dir", state, "--quiet"],
            launcher: ["/bin/bash", "-c", script])
        let status = try child.wait(timeout: 120)
        #expect(status == 1, "ulimit -n \(limit): exit \(status): \(child.stderr)")
        #expect(child.stderr.contains("Too many open files"), "ulimit -n \(limit): \(child.stderr)")
        #expect(
            child.stderr.contains("raise the open-file limit (ulimit -n) or lower --parallel"),
            "ulimit -n \(limit): \(child.stderr)")
        #expect(!child.stderr.contains("check the destination"), "ulimit -n \(limit): \(child.stderr)")
        #expect(!child.stderr.contains("Fatal error"), "ulimit -n \(limit): \(child.stderr)")
    }
}
