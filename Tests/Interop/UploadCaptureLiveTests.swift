import AetherIO
import AetherTestSupport
import Foundation
import Testing

/// `aether upload DIR DEST`: a folder as one resumable, verified upload, into `aether serve`, an S3 server and
/// tuspyserver, killed with -9 at seeded moments and run again.
@Suite(.serialized) struct UploadCaptureLiveTests: SeededContent {
    /// A folder of `small` files of 2-40 KiB in subdirectories and `large` files of 1.5 MiB, and a state directory.
    static func folder(small: Int, large: Int, seed: UInt64) throws -> (
        root: String, state: String, files: [String: [UInt8]]
    ) {
        let directory = try SessionLive.temporaryDirectory()
        let root = directory + "/capture"
        var files: [String: [UInt8]] = [:]
        var generator = SplitMix64(seed: seed)
        for index in 0..<small {
            files["frames/\(index % 5)/frame-\(index).bin"] = Self.bytes(
                2048 + Int(generator.next() % (38 << 10)), seed: seed &+ UInt64(index))
        }
        for index in 0..<large {
            files["meshes/mesh-\(index).ply"] = Self.bytes(3 << 19, seed: seed &+ 1000 &+ UInt64(index))
        }
        for (relative, bytes) in files {
            let path = root + "/" + relative
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        return (root, directory + "/state", files)
    }

    static func fileEvents(_ child: UploadChild) -> [[String: Any]] {
        child.events.filter { $0["event"] as? String == "file" }
    }

    /// The job's last line.
    static func completed(_ child: UploadChild) throws -> [String: Any] {
        try #require(
            child.events.last { $0["event"] as? String == "completed" },
            "no completed line: \(child.stdout) \(child.stderr)")
    }

    /// Runs `arguments`, kills the child with -9 once `files` files completed, and returns what it printed.
    static func killed(_ arguments: [String], afterFiles files: Int, environment: [String: String] = [:]) throws
        -> UploadChild
    {
        let child = try UploadChild(arguments, environment: environment)
        try SessionLive.wait("\(files) files to complete", timeout: 120) {
            fileEvents(child).count >= files || !child.process.isRunning
        }
        child.signal(SIGKILL)
        _ = try child.wait()
        return child
    }

    @Test(arguments: [3, 17, 31] as [Int])
    func killDashNineAtASeededMomentThenTheSameCommandFinishesEveryFileOnce(killAfter: Int) throws {
        let receiver = try ReceiverChild()
        let (root, state, files) = try Self.folder(small: 40, large: 3, seed: UInt64(killAfter))
        let arguments = [
            "upload", root, receiver.url + "/uploads", "--state-dir", state, "--json", "--files", "2", "--max-rate",
            "4M",
            "--first", "*.ply",
        ]
        let first = try Self.killed(arguments, afterFiles: killAfter)
        let finishedBefore = Set(Self.fileEvents(first).compactMap { $0["path"] as? String })
        #expect(finishedBefore.count >= killAfter)
        let (status, second) = try UploadChild.run(arguments)
        #expect(status == 0, "\(second.stderr)")
        let done = try Self.completed(second)
        #expect(done["files"] as? Int == files.count)
        #expect(done["failed"] as? Int == 0)
        let lines = Self.fileEvents(second)
        #expect(lines.count == files.count)
        var locations: Set<String> = []
        for line in lines {
            let path = try #require(line["path"] as? String)
            let location = try #require(line["location"] as? String)
            locations.insert(location)
            #expect(try receiver.object(location) == files[path], "\(path)")
            // No file finished before the kill went again.
            if finishedBefore.contains(path) { #expect(line["already_uploaded"] as? Bool == true, "\(path)") }
        }
        #expect(locations.count == files.count)
        // The manifest is stored and lists every file with the location the job printed.
        let manifestLocation = try #require(done["manifest"] as? String)
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(try receiver.object(manifestLocation))) as? [String: Any])
        #expect(manifest["root"] as? String == done["root"] as? String)
        let listed = try #require(manifest["files"] as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["location"] as? String }) == locations)
        // None stored twice: the store holds each file's object, the manifest's, and nothing else finished. A file
        // the receiver stored whose journal line the kill prevented (its receipt, or its batch's answer, arrived in
        // the instant before) is uploaded again, and the receiver's dedup takes it (by possession, or a batch's bytes
        // found held): one more name for the same stored bytes (a hard link), so the bytes are counted by inode, and
        // only a file not finished before the kill may have a second name.
        let objects = try FileManager.default.contentsOfDirectory(atPath: receiver.store + "/objects")
        let stored = Set(try objects.map { try Syscall.stat(FilePath(receiver.store + "/objects/" + $0)).inode })
        #expect(
            stored.count == files.count + 1, "\(stored.count) stored objects for \(files.count) files and the manifest")
        #expect(
            objects.count <= files.count + 1 + (files.count - finishedBefore.count),
            "\(objects.count) names for \(files.count) files and the manifest, \(finishedBefore.count) finished before")
        // A third run sends nothing.
        let (again, third) = try UploadChild.run(arguments)
        #expect(again == 0)
        #expect(Self.fileEvents(third).allSatisfy { $0["already_uploaded"] as? Bool == true })
        #expect(try Self.completed(third)["manifest"] as? String == manifestLocation)
    }

    /// The receiver killed with -9 mid-capture and started again on the same port and store a second later: the
    /// client waits it out, every file lands once and byte-identical, and the job ends complete.
    @Test func theReceiverKilledWithMinusNineMidCaptureAndRestartedLosesNothing() throws {
        let first = try ReceiverChild()
        let (port, store) = (first.port, first.store)
        let (root, state, files) = try Self.folder(small: 30, large: 2, seed: 41)
        let child = try UploadChild([
            "upload", root, first.url + "/uploads", "--state-dir", state, "--json", "--files", "2", "--max-rate", "2M",
        ])
        try SessionLive.wait("5 files to complete", timeout: 120) {
            Self.fileEvents(child).count >= 5 || !child.process.isRunning
        }
        first.child.signal(SIGKILL)
        _ = try first.child.wait()
        Thread.sleep(forTimeInterval: 1)
        #expect(child.process.isRunning, "the capture gave up while the receiver was down: \(child.stderr)")
        let second = try ReceiverChild(port: port, store: store)
        #expect(try child.wait(timeout: 180) == 0, "\(child.stderr)")
        let done = try Self.completed(child)
        #expect(done["files"] as? Int == files.count)
        #expect(done["failed"] as? Int == 0)
        var locations: Set<String> = []
        for line in Self.fileEvents(child) {
            let path = try #require(line["path"] as? String)
            let location = try #require(line["location"] as? String)
            locations.insert(location)
            #expect(try second.object(location) == files[path], "\(path)")
        }
        #expect(locations.count == files.count)
        // Each file's bytes once (by inode): a batch cut by the kill is sent again, and the files it had completed
        // are found held, one more name each for the same bytes.
        let objects = try FileManager.default.contentsOfDirectory(atPath: store + "/objects")
        let stored = Set(try objects.map { try Syscall.stat(FilePath(store + "/objects/" + $0)).inode })
        #expect(stored.count == files.count + 1, "\(stored.count) objects for \(files.count) files and the manifest")
    }

    @Test(arguments: S3Server.allCases)
    func aFolderToS3KeepsItsRelativePathsUnderThePrefix(server: S3Server) throws {
        let peer = try server.peer()
        let (root, state, files) = try Self.folder(small: 12, large: 1, seed: 7)
        let prefix = "captures/\(UUID().uuidString)"
        let (status, child) = try UploadChild.run(
            [
                "upload", root, "s3://\(peer.bucket)/\(prefix)/", "--endpoint", peer.endpoint, "--state-dir", state,
                "--json", "--s3-flavor", server == .rgw ? "ceph" : "unknown",
            ],
            environment: [
                "AWS_ACCESS_KEY_ID": peer.accessKeyID, "AWS_SECRET_ACCESS_KEY": peer.secretAccessKey,
                "AWS_REGION": "us-east-1",
            ])
        #expect(status == 0, "\(child.stderr)")
        let done = try Self.completed(child)
        #expect(done["files"] as? Int == files.count)
        for (relative, bytes) in files {
            let object = try peer.object(prefix + "/" + relative)
            #expect(object.size == bytes.count, "\(relative)")
            #expect(object.sha256 == SHA256.hash(bytes).hex, "\(relative)")
        }
        let manifest = try peer.object(prefix + "/.aether-capture.json")
        #expect((manifest.size ?? 0) > 0)
    }

    @Test func aFolderToTuspyserverNamesEachFileByItsRelativePath() throws {
        let peer = try TusPeerProcess.get()
        let (root, state, files) = try Self.folder(small: 8, large: 0, seed: 9)
        let (status, child) = try UploadChild.run([
            "upload", root, peer.tusURL("files"), "--state-dir", state, "--json",
        ])
        #expect(status == 0, "\(child.stderr)")
        for line in Self.fileEvents(child) {
            let path = try #require(line["path"] as? String)
            let location = try #require(line["location"] as? String)
            #expect(try peer.storedOnTusServer("files", location) == files[path], "\(path)")
            #expect(try peer.metadata("files", location)["filename"] == path)
        }
    }

    /// Mounts inside the folder, in a mount namespace of the test's own (`unshare`, root): a proc mounted there is
    /// never entered (its files describe the system, some never end); another file system is entered, unless
    /// `--one-file-system`; both are named in the skipped lines.
    @Test(arguments: [false, true]) func mountsInsideTheFolderAreNamedAndTheKernelsOwnLeftOut(oneFileSystem: Bool)
        throws
    {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return }
        let receiver = try ReceiverChild()
        let (root, state, files) = try Self.folder(small: 3, large: 0, seed: 21)
        for name in ["p", "m"] {
            try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
        }
        let script =
            "mount -t proc proc \"$R/p\" && mount -t tmpfs other \"$R/m\" && echo other > \"$R/m/other.txt\" && exec \"$@\""
        let child = try UploadChild(
            ["upload", root, receiver.url + "/uploads", "--state-dir", state, "--json"]
                + (oneFileSystem ? ["--one-file-system"] : []),
            environment: ["R": root],
            launcher: ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh"])
        #expect(try child.wait() == 0, "\(child.stderr)")
        let uploaded = Set(Self.fileEvents(child).compactMap { $0["path"] as? String })
        let skipped = Dictionary(
            child.events.filter { $0["event"] as? String == "skipped" }.compactMap { event in
                (event["path"] as? String).map { ($0, event["reason"] as? String ?? "") }
            }, uniquingKeysWith: { first, _ in first })
        #expect(skipped["p"] == "a proc file system (the kernel's own)", "\(child.stdout)")
        if oneFileSystem {
            #expect(skipped["m"] == "another file system (--one-file-system)", "\(child.stdout)")
            #expect(uploaded == Set(files.keys))
        } else {
            #expect(skipped["m"] == nil)
            #expect(uploaded == Set(files.keys).union(["m/other.txt"]))
        }
    }

    /// `aether status` lists the capture with its manifest's copy in the state directory, and `aether verify DIR
    /// MANIFEST` checks the folder against it: exit 0 intact, 1 naming a changed file.
    @Test func statusListsTheCaptureAndVerifyChecksTheFolderAgainstItsManifest() throws {
        let receiver = try ReceiverChild()
        let (root, state, files) = try Self.folder(small: 5, large: 1, seed: 23)
        let (status, _) = try UploadChild.run(["upload", root, receiver.url + "/uploads", "--state-dir", state])
        #expect(status == 0)
        let (listed, list) = try UploadChild.run(["status", "--state-dir", state, "--json"])
        #expect(listed == 0)
        let capture = try #require(list.events.first { $0["event"] as? String == "capture" }, "\(list.stdout)")
        #expect(capture["files"] as? Int == files.count)
        let manifest = try #require(capture["manifest"] as? String)
        let (intact, good) = try UploadChild.run(["verify", root, manifest])
        #expect(intact == 0, "\(good.stdout) \(good.stderr)")
        #expect(good.stdout.contains("intact: \(files.count) files, root "))
        let changed = try #require(files.keys.sorted().first)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: root + "/" + changed))
        let (bad, report) = try UploadChild.run(["verify", root, manifest])
        #expect(bad == 1)
        #expect(report.stdout.contains("size differs: \(changed): 3 bytes"), "\(report.stdout)")
    }

    /// `--priority` takes PATTERN=LEVEL entries with the queue's level names; anything else is a usage error before
    /// anything is read or sent, and it goes with a directory only.
    @Test func priorityEntriesAreCheckedAsUsage() throws {
        let (root, state, _) = try Self.folder(small: 1, large: 0, seed: 29)
        let base = ["upload", root, "http://127.0.0.1:9/uploads", "--state-dir", state, "--priority"]
        let cases = [
            ("frames", "--priority takes PATTERN=LEVEL entries, not frames"),
            ("*.ply=urgent", "--priority: urgent is not a level (critical, high, elevated, normal, low, background)"),
            ("=low", "--priority takes PATTERN=LEVEL entries, not =low"),
        ]
        for (entry, message) in cases {
            let (status, child) = try UploadChild.run(base + [entry])
            #expect(status == 2)
            #expect(child.stderr.contains(message), "\(child.stderr)")
        }
        let file = root + "/" + (try FileManager.default.subpathsOfDirectory(atPath: root).sorted().last ?? "")
        let (status, child) = try UploadChild.run(["upload", file, "http://127.0.0.1:9/u", "--priority", "*=low"])
        #expect(status == 2)
        #expect(child.stderr.contains("--priority goes with a directory"), "\(child.stderr)")
    }

    @Test func aFileTheDestinationRefusesFailsAloneAndTheExitSaysSo() throws {
        let receiver = try ReceiverChild(extra: ["--max-object", "100000"])
        let (root, state, files) = try Self.folder(small: 6, large: 1, seed: 11)
        let arguments = ["upload", root, receiver.url + "/uploads", "--state-dir", state, "--json"]
        let (status, child) = try UploadChild.run(arguments)
        #expect(status == 1, "\(child.stderr)")
        let failed = child.events.filter { $0["event"] as? String == "file-failed" }
        #expect(failed.compactMap { $0["path"] as? String } == ["meshes/mesh-0.ply"])
        #expect(Self.fileEvents(child).count == files.count - 1)
        #expect(child.stderr.contains("1 of \(files.count) files failed"))
        #expect(try Self.completed(child)["manifest"] == nil)
    }
}
