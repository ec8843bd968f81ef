import AetherCoding
import AetherIO
import AetherIntegrity
import AetherReceiver
import Foundation
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// `CaptureJob`: a folder as one resumable, verified upload into a real receiver (`ReceiverServer`, 127.0.0.1).
@Suite(.serialized) struct CaptureJobTests {
    /// A folder of files to capture, and a receiver to capture it into.
    final class Folder: @unchecked Sendable {
        // @unchecked: every field is set once in init.
        let fixture: NativeUploadFixture
        let root: String
        var contents: [String: [UInt8]] = [:]

        init() throws {
            fixture = try NativeUploadFixture(bytes: [1])
            root = fixture.upload.directory + "/capture"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        }

        func add(_ relative: String, _ bytes: [UInt8]) throws {
            let path = root + "/" + relative
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try AtomicFile.write(bytes, to: path)
            contents[relative] = bytes
        }

        func options(parallelFiles: Int = 4) -> CaptureJob.Options {
            CaptureJob.Options(
                upload: UploadJob.Options(
                    configuration: UploadConfiguration(chunkSize: 16 << 10),
                    client: HTTPClientConfiguration(proxy: .none),
                    stateDirectory: FilePath(fixture.upload.stateDirectory)),
                parallelFiles: parallelFiles)
        }

        func job(_ options: CaptureJob.Options? = nil) throws -> CaptureJob {
            try CaptureJob(
                directory: FilePath(root), destination: fixture.destination, options: options ?? self.options())
        }
    }

    /// Runs `job`, returning its outcome and every event.
    static func run(_ job: CaptureJob) async throws -> (CaptureOutcome, [CaptureEvent]) {
        let events = Mutex<[CaptureEvent]>([])
        let outcome = try await job.run { event in events.withLock { $0.append(event) } }
        return (outcome, events.withLock { $0 })
    }

    static func sentFiles(_ events: [CaptureEvent]) -> Set<String> {
        Set(
            events.compactMap { event in
                if case .file(let path, .chunkAcknowledged) = event { return path }
                return nil
            })
    }

    @Test func aFolderLandsByteForByteWithItsManifestAndASecondRunSendsNothing() async throws {
        let folder = try Folder()
        for index in 0..<40 {
            try folder.add(
                "frames/\(index / 10)/frame-\(index).bin", UploadFixture.seeded(3000 + index * 97, seed: UInt64(index)))
        }
        try folder.add("mesh/scan.ply", UploadFixture.seeded(300_000, seed: 99))
        try folder.add("empty.txt", [])
        try folder.add("notes/é and space.txt", Array("hello".utf8))
        let (outcome, events) = try await Self.run(try folder.job())
        #expect(outcome.failed.isEmpty, "\(outcome.failed)")
        #expect(outcome.complete)
        #expect(outcome.files.count == folder.contents.count)
        #expect(
            outcome.files.map(\.path)
                == folder.contents.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        for file in outcome.files {
            #expect(try folder.fixture.object(at: file.location) == folder.contents[file.path], "\(file.path)")
            #expect(file.sha256 == SHA256.hash(folder.contents[file.path] ?? []))
            #expect(!file.alreadyUploaded)
            // The name travels: the receiver keeps the relative path in its catalogue.
            let id = try UploadID(String(file.location.split(separator: "/").last ?? ""))
            let record = try folder.fixture.server.engine.status(
                id, owner: ClientIdentity(ReceiverRouter.loopbackClient)
            ).record
            #expect(record.metadata["filename"] == Array(file.path.utf8), "\(file.path)")
        }
        // The manifest: stored at the destination, its root the one recomputed from the files.
        let manifestLocation = try #require(outcome.manifestLocation)
        let stored = try #require(try folder.fixture.object(at: manifestLocation))
        let document = try #require(try JSONSerialization.jsonObject(with: Data(stored)) as? [String: Any])
        #expect(document["root"] as? String == outcome.root?.hex)
        #expect((document["files"] as? [[String: Any]])?.count == folder.contents.count)
        var tree = StreamingMerkleTree()
        for file in outcome.files {
            try tree.append(
                CaptureManifest.leaf(
                    file.relativePath, size: file.size, sha256: file.sha256, merkleRoot: file.merkleRoot))
        }
        #expect(outcome.root == tree.root)
        // Progress reached the whole: every file and byte.
        let last = events.compactMap { event -> CaptureProgress? in
            if case .progress(let progress) = event { return progress }
            return nil
        }.last
        #expect(last?.completedFiles == folder.contents.count)
        #expect(last?.acknowledgedBytes == last?.totalBytes)
        // The same call again: every file found in the journal, nothing sent, the same root.
        let (again, againEvents) = try await Self.run(try folder.job())
        #expect(again.complete)
        #expect(again.files.allSatisfy { $0.alreadyUploaded })
        #expect(again.root == outcome.root)
        #expect(Self.sentFiles(againEvents).isEmpty)
        #expect(again.manifestLocation == outcome.manifestLocation)
        guard case .started(let totals) = againEvents.first(where: { if case .started = $0 { true } else { false } })
        else {
            Issue.record("no started event")
            return
        }
        #expect(totals.alreadyUploaded == folder.contents.count)
    }

    @Test func aChangedFileAloneIsSentAgain() async throws {
        let folder = try Folder()
        for index in 0..<6 { try folder.add("f\(index).bin", UploadFixture.seeded(20_000, seed: UInt64(index))) }
        let (first, _) = try await Self.run(try folder.job())
        #expect(first.complete)
        try folder.add("f3.bin", UploadFixture.seeded(25_000, seed: 333))
        let (second, events) = try await Self.run(try folder.job())
        #expect(second.complete)
        #expect(Self.sentFiles(events).subtracting([CaptureManifest.name]) == ["f3.bin"])
        let changed = try #require(second.files.first { $0.path == "f3.bin" })
        #expect(!changed.alreadyUploaded)
        #expect(try folder.fixture.object(at: changed.location) == folder.contents["f3.bin"])
        #expect(second.root != first.root)
    }

    @Test func fifosLinksAndNamesThatAreNotUTF8AreLeftOutOrRefusedAndTheRestLands() async throws {
        let folder = try Folder()
        try folder.add("a.bin", UploadFixture.seeded(5000, seed: 1))
        try folder.add("sub/b.bin", UploadFixture.seeded(7000, seed: 2))
        #expect(unsafe mkfifo(folder.root + "/pipe", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: folder.root + "/link.bin", withDestinationPath: "a.bin")
        try FileManager.default.createSymbolicLink(atPath: folder.root + "/sub/up", withDestinationPath: "..")
        // A name with an invalid UTF-8 byte (0xFF).
        let badPath = try FilePath(bytes: Array(folder.root.utf8) + Array("/bad-".utf8) + [0xFF] + Array(".bin".utf8))
        let fd = try Syscall.open(badPath, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
        try Syscall.writeFully(fd, [1, 2, 3], path: "bad")
        Syscall.close(fd)
        let (outcome, _) = try await Self.run(try folder.job())
        #expect(Set(outcome.files.map(\.path)) == ["a.bin", "sub/b.bin"])
        for file in outcome.files {
            #expect(try folder.fixture.object(at: file.location) == folder.contents[file.path])
        }
        #expect(Set(outcome.skipped.map(\.path)) == ["link.bin", "pipe", "sub/up"])
        #expect(outcome.skipped.first { $0.path == "pipe" }?.reason.contains("FIFO") == true)
        #expect(outcome.failed.count == 1)
        #expect(outcome.failed.first?.message.contains("not valid UTF-8") == true)
        // A failed file leaves the capture incomplete: no manifest claims a whole that is not there.
        #expect(!outcome.complete)
        #expect(outcome.manifestLocation == nil)
        // Following links: the link to a file is taken; the link back up is a loop, skipped.
        var following = folder.options()
        following.followSymbolicLinks = true
        following.exclude = ["bad-*"]
        let (followed, _) = try await Self.run(try folder.job(following))
        #expect(Set(followed.files.map(\.path)) == ["a.bin", "link.bin", "sub/b.bin"])
        #expect(followed.skipped.contains { $0.path == "sub/up" && $0.reason.contains("loop") })
        #expect(followed.complete)
    }

    @Test func includeExcludeAndFirstShapeWhatGoesAndInWhichOrder() async throws {
        let folder = try Folder()
        for index in 0..<8 { try folder.add("frames/\(index).jpg", UploadFixture.seeded(4000, seed: UInt64(index))) }
        try folder.add("mesh.ply", UploadFixture.seeded(4000, seed: 50))
        try folder.add("scratch/tmp.log", UploadFixture.seeded(100, seed: 51))
        var options = folder.options(parallelFiles: 1)
        options.exclude = ["scratch/*"]
        options.first = ["*.ply"]
        let (outcome, events) = try await Self.run(try folder.job(options))
        #expect(outcome.complete)
        #expect(!outcome.files.contains { $0.path.hasPrefix("scratch/") })
        let order = events.compactMap { event -> String? in
            if case .fileCompleted(let file) = event { return file.path }
            return nil
        }
        #expect(order.first == "mesh.ply")
        var only = folder.options()
        only.include = ["frames/*.jpg"]
        let (included, _) = try await Self.run(try folder.job(only))
        #expect(included.files.count == 8)
    }

    /// `priorities` places files on the queue's six levels, the first matching entry winning over `first`: with one
    /// file at a time they complete critical, then `first`'s high, then normal, then background, by path within
    /// a level.
    @Test func priorityPatternsOrderFilesOnTheSixLevels() async throws {
        let folder = try Folder()
        for name in ["a.jpg", "b.jpg", "mesh.ply", "notes.txt", "preview.png", "z.ply"] {
            try folder.add(name, UploadFixture.seeded(3000, seed: UInt64(name.utf8.count)))
        }
        var options = folder.options(parallelFiles: 1)
        options.priorities = [("z.ply", .critical), ("*.png", .background), ("*.jpg", .low)]
        options.first = ["*.ply", "*.jpg"]
        let (outcome, events) = try await Self.run(try folder.job(options))
        #expect(outcome.complete)
        let order = events.compactMap { event -> String? in
            if case .fileCompleted(let file) = event { return file.path }
            return nil
        }
        #expect(order == ["z.ply", "mesh.ply", "notes.txt", "a.jpg", "b.jpg", "preview.png"])
    }

    /// A copy of a file under another name is stored once: the receiver proves the client holds it (possession),
    /// sends no chunk of it, and keeps one object under both uploads (a hard link on the directory store). (Files
    /// sent each on its own, as files over 1 MiB go; batched files are the next test.)
    @Test func aCopiedFileIsStoredOnceThroughPossession() async throws {
        let folder = try Folder()
        let bytes = UploadFixture.seeded(200_000, seed: 77)
        try folder.add("a/scan.bin", bytes)
        try folder.add("b/copy-of-scan.bin", bytes)
        var options = folder.options(parallelFiles: 1)
        options.batchSmallFiles = false
        options.growParallelFiles = false  // one file at a time: the copy is created once the first is complete
        let (outcome, events) = try await Self.run(try folder.job(options))
        #expect(outcome.complete)
        let completed = events.compactMap { event -> (String, UploadOutcome)? in
            if case .file(let path, .completed(let result)) = event { return (path, result) }
            return nil
        }
        let first = try #require(completed.first { $0.0 == "a/scan.bin" }?.1)
        let copy = try #require(completed.first { $0.0 == "b/copy-of-scan.bin" }?.1)
        #expect(!first.serverVerified.contains("possession"))
        #expect(copy.serverVerified.contains("possession"))
        #expect(copy.partsSent == 0)
        #expect(!Self.sentFiles(events).contains("b/copy-of-scan.bin"))
        #expect(try folder.fixture.object(at: copy.receipt.location) == bytes)
        func objectStatus(_ location: String) throws -> FileStatus {
            let id = try UploadID(String(try #require(location.split(separator: "/").last)))
            return try Syscall.stat(try DirectoryBlobStore(root: folder.fixture.store).path(of: .object(id)))
        }
        let stored = try objectStatus(first.receipt.location)
        #expect(try objectStatus(copy.receipt.location).inode == stored.inode)
    }

    /// Small files go several to a request (`docs/PROTOCOL.md` 3.10): each is its own object at the receiver, named,
    /// verified against its own receipt and byte-identical; a copy in the same batch is stored once (the receiver
    /// hashes its bytes and finds the object it holds); the receiver counts the batches.
    @Test func smallFilesGoInBatchesEachStoredAsItsOwnObjectAndACopyOnce() async throws {
        let folder = try Folder()
        var contents: [String: [UInt8]] = [:]
        for index in 0..<150 { contents["frames/\(index).bin"] = UploadFixture.seeded(index * 37, seed: UInt64(index)) }
        contents["frames/copy-of-7.bin"] = contents["frames/7.bin"]
        for (path, bytes) in contents { try folder.add(path, bytes) }
        try folder.add("mesh.ply", UploadFixture.seeded(1_500_000, seed: 99))
        let (outcome, events) = try await Self.run(try folder.job())
        #expect(outcome.complete)
        // The receiver checked the stored manifest against what it holds (GET .../capture).
        #expect(outcome.receiverVerified)
        #expect(outcome.files.count == 152)
        for result in outcome.files where result.path != "mesh.ply" {
            #expect(try folder.fixture.object(at: result.location) == contents[result.path], "\(result.path)")
        }
        let completed = events.compactMap { event -> (String, UploadOutcome)? in
            if case .file(let path, .completed(let result)) = event { return (path, result) }
            return nil
        }
        #expect(Set(completed.map(\.0)).isSuperset(of: Set(contents.keys)))
        let answer = try await folder.fixture.client.send(
            HTTPRequest(method: "GET", url: folder.fixture.server.url + "/metrics", headers: HTTPHeaders([])))
        let metrics = String(decoding: answer.body, as: UTF8.self)
        let batched = metrics.split(separator: "\n").first { $0.hasPrefix("aether_batched_files_total ") }
        // Every file of 1 MiB or less (151); the mesh and the manifest go on their own.
        #expect(batched == "aether_batched_files_total 151", "\(metrics)")
        func inode(_ path: String) throws -> UInt64 {
            let location = try #require(outcome.files.first { $0.path == path }?.location)
            let id = try UploadID(String(try #require(location.split(separator: "/").last)))
            return try Syscall.stat(try DirectoryBlobStore(root: folder.fixture.store).path(of: .object(id))).inode
        }
        #expect(try inode("frames/7.bin") == inode("frames/copy-of-7.bin"))
        #expect(try inode("frames/7.bin") != inode("frames/8.bin"))
    }

    /// `aether verify DIR MANIFEST --destination`: the receiver proves it holds every file of the capture (a spot
    /// check of each against the folder's bytes); a file whose stored bytes were damaged at rest fails its proof, one
    /// whose upload was cancelled is named as not held, and the rest stay proven.
    @Test func theDestinationProvesItHoldsEachFileAndNamesOneDamagedOrGone() async throws {
        let folder = try Folder()
        for index in 0..<20 {
            try folder.add("frames/\(index).bin", UploadFixture.seeded(3000 + index, seed: UInt64(index)))
        }
        try folder.add("mesh.ply", UploadFixture.seeded(300_000, seed: 99))
        let (outcome, _) = try await Self.run(try folder.job())
        #expect(outcome.complete)
        let manifest = try CaptureManifest(outcome.files)
        let directory = FilePath(folder.root)
        let local = try manifest.verify(directory: directory)
        #expect(local.isIntact)
        let options = folder.options().upload
        let check = try await manifest.verifyAtDestination(directory: directory, local: local, options: options)
        #expect(check.isHeld, "\(check.files.filter { if case .held = $0.standing { false } else { true } })")
        #expect(check.files.count == 21)
        func location(_ path: String) throws -> String {
            try #require(outcome.files.first { $0.path == path }?.location)
        }
        // frames/3.bin's stored bytes damaged at rest; frames/5.bin's upload cancelled at the receiver.
        let id = try UploadID(String(try #require(try location("frames/3.bin").split(separator: "/").last)))
        let object = try DirectoryBlobStore(root: folder.fixture.store).path(of: .object(id)).description
        var stored = Array(try #require(FileManager.default.contents(atPath: object)))
        stored[100] ^= 0xFF
        try Data(stored).write(to: URL(fileURLWithPath: object))
        let cancelled = try await folder.fixture.client.send(
            HTTPRequest(
                method: "DELETE", url: try location("frames/5.bin"),
                headers: HTTPHeaders([("Aether-Protocol", "1")])))
        #expect(cancelled.status == 204)
        let after = try await manifest.verifyAtDestination(directory: directory, local: local, options: options)
        let standing = Dictionary(after.files.map { ($0.path, $0.standing) }, uniquingKeysWith: { first, _ in first })
        if case .failed = standing["frames/3.bin"] {
        } else {
            Issue.record("frames/3.bin: \(String(describing: standing["frames/3.bin"]))")
        }
        if case .notHeld = standing["frames/5.bin"] {
        } else {
            Issue.record("frames/5.bin: \(String(describing: standing["frames/5.bin"]))")
        }
        #expect(after.held == 19)
    }

    /// `--recheck`: a rerun asks the destination about the files the journal lists as finished; one whose upload the
    /// receiver no longer holds is sent again, the rest are not. Without it the journal is trusted.
    @Test func aRecheckSendsAgainOnlyTheFilesTheDestinationLost() async throws {
        let folder = try Folder()
        for index in 0..<6 { try folder.add("f\(index).bin", UploadFixture.seeded(5000 + index, seed: UInt64(index))) }
        let (first, _) = try await Self.run(try folder.job())
        #expect(first.complete)
        let lost = try #require(first.files.first { $0.path == "f2.bin" }?.location)
        let cancelled = try await folder.fixture.client.send(
            HTTPRequest(method: "DELETE", url: lost, headers: HTTPHeaders([("Aether-Protocol", "1")])))
        #expect(cancelled.status == 204)
        let (trusted, trustedEvents) = try await Self.run(try folder.job())
        #expect(trusted.files.allSatisfy { $0.alreadyUploaded })
        #expect(Self.sentFiles(trustedEvents).subtracting([CaptureManifest.name]).isEmpty)
        var options = folder.options()
        options.recheckDestination = true
        let (rechecked, events) = try await Self.run(try folder.job(options))
        #expect(rechecked.complete)
        #expect(Self.sentFiles(events).subtracting([CaptureManifest.name]) == ["f2.bin"])
        let reported = events.compactMap { event -> [String]? in
            if case .lostAtDestination(let paths) = event { return paths }
            return nil
        }
        #expect(reported == [["f2.bin"]])
        let again = try #require(rechecked.files.first { $0.path == "f2.bin" })
        #expect(!again.alreadyUploaded)
        let stored = try folder.fixture.object(at: again.location)
        #expect(stored == folder.contents["f2.bin"])
    }

    /// The small files are spot-checked as one population: a sample of the spec's size over them (6 of 40), each
    /// proven; a larger file is checked as every upload is. Every file is still verified against its receipt.
    @Test func smallFilesAreSpotCheckedBySampleAndLargeOnesEach() async throws {
        let folder = try Folder()
        for index in 0..<40 { try folder.add("frames/\(index).bin", UploadFixture.seeded(3000, seed: UInt64(index))) }
        try folder.add("mesh.ply", UploadFixture.seeded(1_500_000, seed: 99))
        let (outcome, events) = try await Self.run(try folder.job())
        #expect(outcome.complete)
        let checked = events.compactMap { event -> String? in
            if case .file(let path, .completed(let result)) = event, result.spotChecks?.passed == true,
                path != CaptureManifest.name
            {
                return path
            }
            return nil
        }
        #expect(checked.count == ByzantineSampler.sampleCount(chunkCount: 40) + 1)
        #expect(checked.contains("mesh.ply"))
        #expect(outcome.spotCheckedFiles == checked.count)
        #expect(outcome.files.count == 41)
    }

    /// The files in flight double while a window of completions delivers 15% more than the one before, go back to
    /// the last size that paid when one does not, and never pass the maximum; a fixed window never moves.
    @Test func theFilesInFlightGrowWhileItPays() {
        let zero = ContinuousClock.now
        var clock = zero
        let window = CaptureJob.FileWindow(start: 4, maximum: 64, at: zero)
        // Each window: `limit` files of 1 MB (at least 8), taking `seconds`.
        func run(_ seconds: Double) {
            let files = max(window.limit, 8)
            for index in 0..<files {
                clock = clock + .seconds(seconds / Double(files))
                if index < files - 1 { window.completed(bytes: 1_000_000, at: clock) }
            }
            window.completed(bytes: 1_000_000, at: clock)
        }
        run(1)  // 8 MB/s: the first window doubles
        #expect(window.limit == 8)
        run(0.5)  // 16 MB/s
        #expect(window.limit == 16)
        run(0.6)  // 26.7 MB/s
        #expect(window.limit == 32)
        run(1.2)  // 26.7 MB/s: no gain; back to 16, and it stays
        #expect(window.limit == 16)
        run(0.1)
        #expect(window.limit == 16)

        let capped = CaptureJob.FileWindow(start: 32, maximum: 64, at: zero)
        for _ in 0..<32 { capped.completed(bytes: 1, at: zero + .seconds(1)) }
        #expect(capped.limit == 64)
        for step in 0..<200 { capped.completed(bytes: 1_000_000, at: zero + .seconds(2 + Double(step) * 0.001)) }
        #expect(capped.limit == 64)

        let fixed = CaptureJob.FileWindow(start: 4, maximum: nil, at: zero)
        for step in 0..<100 { fixed.completed(bytes: 1_000_000, at: zero + .milliseconds(step)) }
        #expect(fixed.limit == 4)
    }

    @Test func aCancelledCaptureResumesAndEveryFileLandsOnce() async throws {
        let folder = try Folder()
        for index in 0..<12 { try folder.add("f\(index).bin", UploadFixture.seeded(60_000, seed: UInt64(index))) }
        var slow = folder.options(parallelFiles: 2)
        slow.upload.configuration.maximumBytesPerSecond = 400_000
        let job = try folder.job(slow)
        let completed = Atomic(0)
        let running = Task {
            try await job.run { event in
                if case .fileCompleted = event { completed.add(1, ordering: .relaxed) }
            }
        }
        while completed.load(ordering: .relaxed) < 3 { try await Task.sleep(for: .milliseconds(20)) }
        running.cancel()
        let error = await #expect(throws: UploaderError.self) { try await running.value }
        #expect(error?.code == .cancelled)
        let (outcome, events) = try await Self.run(try folder.job())
        #expect(outcome.complete)
        #expect(outcome.files.count == 12)
        #expect(outcome.files.filter(\.alreadyUploaded).count >= 3)
        for file in outcome.files {
            #expect(try folder.fixture.object(at: file.location) == folder.contents[file.path])
        }
        // Files finished before the cancel were not sent again.
        let resent = Self.sentFiles(events)
        #expect(outcome.files.filter(\.alreadyUploaded).allSatisfy { !resent.contains($0.path) })
    }

    @Test func twoCapturesOfOneFolderToOneDestinationNeverRunAtOnce() async throws {
        let folder = try Folder()
        for index in 0..<4 { try folder.add("f\(index).bin", UploadFixture.seeded(100_000, seed: UInt64(index))) }
        var slow = folder.options(parallelFiles: 1)
        slow.upload.configuration.maximumBytesPerSecond = 100_000
        let job = try folder.job(slow)
        let started = AsyncStream<Void>.makeStream()
        let running = Task {
            try await job.run { event in
                if case .file(_, .chunkAcknowledged) = event { started.continuation.yield() }
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        _ = await iterator.next()
        let error = await #expect(throws: UploaderError.self) { try await folder.job().run { _ in } }
        #expect(error?.code == .alreadyRunning)
        running.cancel()
        _ = try? await running.value
    }

    /// A capture still being written: a writer adds files (each written in two steps, held open between them) and
    /// rewrites one already sent; every file lands in its last version, none while it was open, and the job ends on
    /// the marker, which is not uploaded.
    @Test func aFollowedFolderTakesFilesAsTheyAreClosedAndEndsOnTheMarker() async throws {
        let folder = try Folder()
        try folder.add("first.bin", UploadFixture.seeded(30_000, seed: 1))
        var options = folder.options()
        options.follow = CaptureFollow(idleSeconds: 30, marker: "DONE", quietSeconds: 0.2, pollInterval: 0.05)
        let job = try folder.job(options)
        let events = Mutex<[CaptureEvent]>([])
        let running = Task { try await job.run { event in events.withLock { $0.append(event) } } }
        var written: [String: [UInt8]] = ["first.bin": UploadFixture.seeded(30_000, seed: 1)]
        for index in 0..<5 {
            let name = "late/file-\(index).bin"
            let bytes = UploadFixture.seeded(50_000, seed: UInt64(10 + index))
            let path = folder.root + "/" + name
            try FileManager.default.createDirectory(atPath: folder.root + "/late", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.write(contentsOf: Data(bytes.prefix(20_000)))
            try await Task.sleep(for: .milliseconds(400))
            try handle.write(contentsOf: Data(bytes.dropFirst(20_000)))
            try handle.close()
            written[name] = bytes
        }
        // One file sent already is rewritten: its new version must be the one at the destination.
        try await Task.sleep(for: .milliseconds(500))
        let rewritten = UploadFixture.seeded(40_000, seed: 99)
        try AtomicFile.write(rewritten, to: folder.root + "/first.bin")
        written["first.bin"] = rewritten
        try await Task.sleep(for: .milliseconds(500))
        #expect(FileManager.default.createFile(atPath: folder.root + "/DONE", contents: Data()))
        let outcome = try await running.value
        #expect(outcome.complete, "\(outcome.failed)")
        #expect(Set(outcome.files.map(\.path)) == Set(written.keys))
        for file in outcome.files {
            #expect(try folder.fixture.object(at: file.location) == written[file.path], "\(file.path)")
        }
        // No file was sent while its writer held it: every completed version is a whole one.
        let completed = events.withLock { $0 }.compactMap { event -> CaptureFileResult? in
            if case .fileCompleted(let file) = event { return file }
            return nil
        }
        for file in completed where file.path.hasPrefix("late/") {
            #expect(file.size == 50_000, "\(file.path) was sent at \(file.size) bytes")
        }
        #expect(!outcome.files.contains { $0.path == "DONE" })
    }

    @Test func aFollowedFolderEndsAfterItsIdleTime() async throws {
        let folder = try Folder()
        for index in 0..<3 { try folder.add("f\(index).bin", UploadFixture.seeded(10_000, seed: UInt64(index))) }
        var options = folder.options()
        options.follow = CaptureFollow(idleSeconds: 1, quietSeconds: 0, pollInterval: 0.05)
        let started = ContinuousClock.now
        let (outcome, _) = try await Self.run(try folder.job(options))
        #expect(outcome.complete)
        #expect(outcome.files.count == 3)
        #expect(started.duration(to: .now) >= .seconds(1))
    }

    /// Found by a hostile pass: a file rewritten with its modification time put back (`cp -p`, `touch -d`) kept
    /// its journal entry and was never sent again; the status change time now tells.
    @Test func aFileRewrittenWithItsOldModificationTimeIsSentAgain() async throws {
        let folder = try Folder()
        try folder.add("f.txt", Array("version one\n".utf8))
        try folder.add("g.txt", Array("unchanged\n".utf8))
        let (first, _) = try await Self.run(try folder.job())
        #expect(first.complete)
        let path = folder.root + "/f.txt"
        let modified = try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        try Task.checkCancellation()
        try await Task.sleep(for: .milliseconds(20))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data("VERSION TWO\n".utf8))
        try handle.close()
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: path)
        let (second, events) = try await Self.run(try folder.job())
        #expect(second.complete)
        #expect(Self.sentFiles(events).subtracting([CaptureManifest.name]) == ["f.txt"])
        let changed = try #require(second.files.first { $0.path == "f.txt" })
        #expect(try folder.fixture.object(at: changed.location) == Array("VERSION TWO\n".utf8))
    }

    /// Found by a hostile pass: a file swapped for a link (to a file outside the folder) after the walk was uploaded
    /// through the link. The uploader now refuses a file whose device and inode are not the ones the walk saw.
    @Test func aFileReplacedSinceTheWalkIsRefusedNotUploaded() async throws {
        let folder = try Folder()
        try folder.add("a.bin", UploadFixture.seeded(5000, seed: 1))
        let outside = folder.fixture.upload.directory + "/outside.bin"
        try AtomicFile.write(UploadFixture.seeded(5000, seed: 2), to: outside)
        let status = try Syscall.lstat(FilePath(folder.root + "/a.bin"))
        try FileManager.default.removeItem(atPath: folder.root + "/a.bin")
        try FileManager.default.createSymbolicLink(atPath: folder.root + "/a.bin", withDestinationPath: outside)
        var target = ChunkedUploader.Target(
            file: FilePath(folder.root + "/a.bin"), destination: folder.fixture.destination, mode: .native)
        target.expectedIdentity = (status.device, status.inode)
        let uploader = ChunkedUploader(
            target: target, backend: try await folder.fixture.backend(), snapshots: try folder.fixture.upload.store(),
            snapshotKey: "swapped", configuration: UploadConfiguration(chunkSize: 16 << 10))
        let error = await #expect(throws: UploaderError.self) { try await uploader.run { _ in } }
        #expect(error?.code == .fileChanged)
        #expect(error?.message.contains("was replaced") == true)
        #expect(folder.fixture.wire.snapshot.chunks.isEmpty)
    }

    /// Found by a hostile pass: the folder given as its own state directory uploaded the vault's master key.
    @Test func theStateDirectoryIsNeverTheFolderNorAboveIt() async throws {
        let folder = try Folder()
        try folder.add("a.bin", [1, 2, 3])
        for state in [folder.root, folder.fixture.upload.directory] {
            var options = folder.options()
            options.upload.stateDirectory = FilePath(state)
            _ = unsafe chmod(state, 0o700)
            let error = await #expect(throws: UploaderError.self) { try await folder.job(options).run { _ in } }
            #expect(error?.code == .invalidArgument, "\(state)")
        }
    }

    /// Found by a hostile pass: `--max-rate` held per file, so 16 files at once went 13 times over it.
    @Test func theRateCapHoldsForTheWholeCaptureNotEachFile() async throws {
        let folder = try Folder()
        for index in 0..<4 { try folder.add("f\(index).bin", UploadFixture.seeded(200_000, seed: UInt64(index))) }
        var options = folder.options(parallelFiles: 4)
        options.upload.configuration.maximumBytesPerSecond = 400_000
        options.upload.configuration.flags.dedup = false
        let started = ContinuousClock.now
        let (outcome, _) = try await Self.run(try folder.job(options))
        #expect(outcome.complete)
        // 800,000 bytes at 400,000 a second: 2 s less the pacer's first burst; per file it took 0.5 s.
        #expect(started.duration(to: .now) >= .seconds(1.5))
    }

    @Test func s3DestinationsJoinThePrefixAndThePath() throws {
        let folder = try Folder()
        let cases = [
            ("s3://bucket", "s3://bucket/a/b.bin"), ("s3://bucket/", "s3://bucket/a/b.bin"),
            ("s3://bucket/scans", "s3://bucket/scans/a/b.bin"), ("s3://bucket/scans/", "s3://bucket/scans/a/b.bin"),
            ("http://127.0.0.1:9/uploads", "http://127.0.0.1:9/uploads"),
        ]
        for (destination, expected) in cases {
            let job = try CaptureJob(directory: FilePath(folder.root), destination: destination)
            #expect(job.destination(of: "a/b.bin") == expected)
        }
    }

    /// An S3 prefix with or without its trailing `/` names the same keys, so both are one capture (one journal, one
    /// lock): a rerun typed without the slash resumes the capture typed with it. HTTP destinations stay as typed.
    @Test func aTrailingSlashOnAnS3PrefixIsTheSameCapture() throws {
        let folder = try Folder()
        func key(_ destination: String) throws -> String {
            try CaptureJob(directory: FilePath(folder.root), destination: destination).key
        }
        #expect(try key("s3://bucket/scans") == key("s3://bucket/scans/"))
        #expect(try key("s3://bucket/scans//") == key("s3://bucket/scans/"))
        #expect(try key("s3://bucket") == key("s3://bucket/"))
        #expect(try key("s3://bucket/scans") != key("s3://bucket/scan"))
        #expect(try key("http://127.0.0.1:9/uploads") != key("http://127.0.0.1:9/uploads/"))
    }

    /// The kernel's own file systems hold no data to upload, and some of their files never end: a folder on one is
    /// refused; the mount table names /proc's device.
    @Test func aFolderOnTheKernelsOwnFileSystemIsRefused() throws {
        let proc = try Syscall.stat(FilePath("/proc"))
        #expect(Syscall.mountedFileSystemTypes()[proc.device] == "proc")
        for root in ["/proc", "/proc/self", "/sys"] {
            do {
                _ = try CaptureWalk.walk(FilePath(root), rules: CaptureWalk.Rules())
                Issue.record("\(root) was walked")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message.contains("the kernel's own"), "\(error.message)")
            }
        }
    }

    /// Whatever reaches the kernel's own file systems is left out, not only directories: a followed link to a file
    /// of /proc or /sys is skipped with the reason (it was read and uploaded: /sys/kernel/notes byte for byte, and
    /// /proc files as empty ones), and `--one-file-system` leaves out a followed link's file on another device.
    @Test func linksIntoTheKernelsFileSystemsAreLeftOut() throws {
        let folder = try Folder()
        try folder.add("a.bin", [1, 2, 3])
        try FileManager.default.createSymbolicLink(
            atPath: folder.root + "/status", withDestinationPath: "/proc/self/status")
        try FileManager.default.createSymbolicLink(
            atPath: folder.root + "/uevent", withDestinationPath: "/sys/kernel/uevent_seqnum")
        try FileManager.default.createSymbolicLink(atPath: folder.root + "/null", withDestinationPath: "/dev/null")
        var rules = CaptureWalk.Rules()
        rules.followSymbolicLinks = true
        let walk = try CaptureWalk.walk(FilePath(folder.root), rules: rules)
        #expect(walk.files.map(\.name) == ["a.bin"])
        let reasons = Dictionary(walk.skipped.map { ($0.relativePath, $0.reason) }, uniquingKeysWith: { a, _ in a })
        #expect(reasons[Array("status".utf8)] == "a proc file system (the kernel's own)")
        if FileManager.default.fileExists(atPath: "/sys/kernel/uevent_seqnum") {
            #expect(reasons[Array("uevent".utf8)] == "a sysfs file system (the kernel's own)")
        }
        #expect(reasons[Array("null".utf8)] != nil)

        let elsewhere = "/dev/shm/aether-capture-test-\(getpid())"
        try Data([7]).write(to: URL(fileURLWithPath: elsewhere))
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let shm = try Syscall.stat(FilePath(elsewhere))
        guard shm.device != (try Syscall.stat(FilePath(folder.root))).device else { return }
        try FileManager.default.createSymbolicLink(atPath: folder.root + "/shm", withDestinationPath: elsewhere)
        #expect(try CaptureWalk.walk(FilePath(folder.root), rules: rules).files.map(\.name).contains("shm"))
        rules.oneFileSystem = true
        let staying = try CaptureWalk.walk(FilePath(folder.root), rules: rules)
        #expect(!staying.files.map(\.name).contains("shm"))
        #expect(
            staying.skipped.contains {
                $0.relativePath == Array("shm".utf8) && $0.reason == "another file system (--one-file-system)"
            })
    }

    /// `verify` reads the file the walk saw: a path replaced since (by a link to elsewhere, say) is refused, not
    /// read through.
    @Test func verifyRefusesAFileReplacedSinceTheWalk() throws {
        let folder = try Folder()
        try folder.add("b.bin", [1, 2, 3])
        let walked = try #require(try CaptureWalk.walk(FilePath(folder.root), rules: CaptureWalk.Rules()).files.first)
        #expect(try CaptureManifest.sha256(of: walked) == SHA256.hash([1, 2, 3]))
        try folder.add("other.bin", [1, 2, 3])
        try FileManager.default.removeItem(atPath: folder.root + "/b.bin")
        try FileManager.default.createSymbolicLink(
            atPath: folder.root + "/b.bin", withDestinationPath: folder.root + "/other.bin")
        #expect(throws: IOError.self) { _ = try CaptureManifest.sha256(of: walked) }
    }

    /// `aether status` lists captures from their journals: the folder, the destination and the files finished so
    /// far, read without the capture's lock.
    @Test func keptCapturesNameTheirFolderDestinationAndFinishedFiles() async throws {
        let folder = try Folder()
        try folder.add("a.bin", UploadFixture.seeded(30_000, seed: 3))
        try folder.add("b/c.bin", UploadFixture.seeded(50_000, seed: 4))
        let job = try folder.job()
        let (outcome, _) = try await Self.run(job)
        #expect(outcome.complete)
        let kept = try CaptureJob.kept(
            stateDirectory: UploadStateDirectory.resolve(override: FilePath(folder.fixture.upload.stateDirectory)))
        let found = try #require(kept.first { $0.key == job.key })
        #expect(found.filesDone == 2)
        #expect(found.bytesDone == 80_000)
        #expect(found.destination == folder.fixture.destination)
        #expect(found.directory == (try UploadJob.canonical(FilePath(folder.root))))
        let manifest = try CaptureManifest.parse(
            try GuardedFile(path: try #require(found.manifest)).readAll(maximumBytes: CaptureManifest.maximumBytes))
        #expect(manifest.root == outcome.root)
    }

    /// A journal over the limit (which the capture itself refuses) is not read by the listing either: 512 MiB
    /// read into memory, then listed as an empty capture, before.
    @Test func aJournalOverTheLimitIsNotListed() throws {
        let folder = try Folder()
        let state = try UploadStateDirectory.resolve(override: FilePath(folder.fixture.upload.stateDirectory))
        _ = try CaptureJournal(state: state, key: "oversized")
        let path = folder.fixture.upload.stateDirectory + "/captures/oversized.journal"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(CaptureJournal.maximumBytes) + 1)
        try handle.close()
        #expect(try CaptureJob.kept(stateDirectory: state).allSatisfy { $0.key != "oversized" })
    }

    /// `aether verify DIR MANIFEST`'s check: the stored manifest parses (its root recomputed), the folder as
    /// captured is intact, and each change is named: a file gone, one grown, one with a byte changed, one added.
    @Test func aFolderIsCheckedAgainstItsManifestAndEachDifferenceNamed() async throws {
        let folder = try Folder()
        try folder.add("a.bin", UploadFixture.seeded(30_000, seed: 5))
        try folder.add("b/c.bin", UploadFixture.seeded(50_000, seed: 6))
        try folder.add("b/d.bin", UploadFixture.seeded(20_000, seed: 7))
        let (outcome, _) = try await Self.run(try folder.job())
        #expect(outcome.complete)
        let kept = try CaptureJob.kept(
            stateDirectory: UploadStateDirectory.resolve(override: FilePath(folder.fixture.upload.stateDirectory)))
        let bytes = try GuardedFile(path: try #require(kept.first?.manifest)).readAll(maximumBytes: 1 << 20)
        let manifest = try CaptureManifest.parse(bytes)
        #expect(manifest.files.map(\.path) == ["a.bin", "b/c.bin", "b/d.bin"])
        let intact = try manifest.verify(directory: FilePath(folder.root))
        #expect(intact.isIntact && intact.intact == 3 && intact.unlisted.isEmpty)

        try FileManager.default.removeItem(atPath: folder.root + "/a.bin")
        try folder.add("b/c.bin", UploadFixture.seeded(50_001, seed: 6))
        var changed = UploadFixture.seeded(20_000, seed: 7)
        changed[777] ^= 1
        try folder.add("b/d.bin", changed)
        try folder.add("new.bin", [1, 2, 3])
        let result = try manifest.verify(directory: FilePath(folder.root))
        #expect(!result.isIntact)
        #expect(result.intact == 0)
        #expect(result.problems.map(\.path) == ["a.bin", "b/c.bin", "b/d.bin"])
        #expect(
            result.problems.map(\.problem) == [
                .missing, .sizeDiffers(expected: 50_000, actual: 50_001), .contentDiffers,
            ])
        #expect(result.unlisted == [Array("new.bin".utf8)])
    }

    /// The manifest's parse is strict: a changed size (the root no longer matches), a path that climbs out, an
    /// unknown key, a Boolean for a size and paths out of order are each refused.
    @Test func aDamagedCaptureManifestIsRefused() throws {
        let files = [
            CaptureFileResult(
                relativePath: Array("a.bin".utf8), size: 3, sha256: SHA256.hash([1, 2, 3]),
                merkleRoot: SHA256.hash([4]), location: "/uploads/a", alreadyUploaded: false),
            CaptureFileResult(
                relativePath: Array("b/c.bin".utf8), size: 1, sha256: SHA256.hash([5]),
                merkleRoot: SHA256.hash([6]), location: "/uploads/c", alreadyUploaded: false),
        ]
        let good = String(decoding: try CaptureManifest(files).jsonBytes, as: UTF8.self)
        #expect(try CaptureManifest.parse(Array(good.utf8)).files.count == 2)
        let cases: [(String, IntegrityError.Code)] = [
            (good.replacingOccurrences(of: "\"size\":3", with: "\"size\":4"), .digestMismatch),
            (good.replacingOccurrences(of: "\"b/c.bin\"", with: "\"../c.bin\""), .malformedManifest),
            (good.replacingOccurrences(of: "\"version\":1", with: "\"version\":1,\"x\":0"), .malformedManifest),
            (good.replacingOccurrences(of: "\"size\":1", with: "\"size\":true"), .malformedManifest),
            (good.replacingOccurrences(of: "\"b/c.bin\"", with: "\"0.bin\""), .malformedManifest),
            (good.replacingOccurrences(of: "\"version\":1", with: "\"version\":2"), .unsupported),
            ("[]", .malformedManifest),
            // The same values in another spelling than a capture writes.
            ("\u{FEFF}" + good, .malformedManifest),
            (good.replacingOccurrences(of: "\"version\":1", with: "\"version\":1.0"), .malformedManifest),
            (good.replacingOccurrences(of: "\"version\":1}", with: "\"version\":1,\"version\":1}"), .malformedManifest),
            (good.replacingOccurrences(of: "\"size\":1", with: "\"size\":1e0"), .malformedManifest),
            (good.replacingOccurrences(of: ",", with: ", "), .malformedManifest),
        ]
        #expect(throws: IntegrityError.self) {
            _ = try CaptureManifest.parse(Array(good.data(using: .utf16) ?? Data()))
        }
        for (text, code) in cases {
            #expect(text != good)
            do {
                _ = try CaptureManifest.parse(Array(text.utf8))
                Issue.record("parsed: \(text)")
            } catch {
                #expect(error.code == code, "\(text): \(error)")
            }
        }
    }
}
