import AetherIO
import AetherReceiver
import FoundationEssentials
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

#if canImport(Foundation)
    import Foundation
#endif

/// `FollowedUploader` against the real receiver (native, size unknown until completion): a file appended to while
/// it is followed is stored whole; the end is the caller's signal or the idle rule once no writer holds the file;
/// a truncated file stops the upload with nothing completed.
@Suite(.serialized) struct FollowedUploaderTests {
    static let part = 16 << 10

    func follower(_ fixture: NativeUploadFixture, backend: any UploadBackend, options: FollowOptions) throws
        -> FollowedUploader
    {
        FollowedUploader(
            target: .init(
                file: FilePath(fixture.upload.file), destination: fixture.destination, mode: .native),
            backend: backend, snapshots: try fixture.upload.store(),
            snapshotKey: SnapshotKey.derive(
                canonicalPath: FilePath(fixture.upload.file), destination: fixture.destination),
            configuration: UploadConfiguration(
                chunkSize: Self.part, parallel: 3, initialBackoff: 0.001, maximumBackoff: 0.004),
            options: options)
    }

    @Test func aFileAppendedToWhileFollowedIsStoredWholeWhenTheCallerSaysItIsDone() async throws {
        let first = NativeUploadFixture.text(20_000, seed: 1)
        let fixture = try NativeUploadFixture(bytes: first)
        let backend = try await fixture.backend()
        let end = FollowEnd()
        let uploader = try follower(fixture, backend: backend, options: FollowOptions(idleSeconds: 3600, end: end))
        let writer = try #require(FileHandle(forWritingAtPath: fixture.upload.file))
        var expected = first
        let running = Task { try await uploader.run { _ in } }
        for burst in 0..<6 {
            let more = NativeUploadFixture.text(9_000 + burst * 3_001, seed: UInt64(10 + burst))
            writer.seekToEndOfFile()
            writer.write(Data(more))
            expected += more
            try await Task.sleep(for: .milliseconds(60))
        }
        writer.closeFile()
        end.finish()
        let outcome = try await running.value
        #expect(outcome.receipt.size == Int64(expected.count))
        #expect(outcome.sha256 == SHA256.hash(expected))
        #expect(outcome.serverVerified.contains("chain-head"))
        #expect(outcome.partCount == (expected.count + Self.part - 1) / Self.part)
        #expect(try fixture.object(at: outcome.receipt.location) == expected)
        #expect(try fixture.upload.store().keys().isEmpty)
    }

    @Test func aClosedFileEndsAfterTheIdlePeriodWhenNoProcessWritesIt() async throws {
        // An exact multiple of the part size: no short last part.
        let bytes = NativeUploadFixture.text(4 * Self.part, seed: 3)
        let fixture = try NativeUploadFixture(bytes: bytes)
        let backend = try await fixture.backend()
        let uploader = try follower(fixture, backend: backend, options: FollowOptions(idleSeconds: 0.2))
        let outcome = try await uploader.run { _ in }
        #expect(outcome.partCount == 4)
        #expect(try fixture.object(at: outcome.receipt.location) == bytes)
    }

    @Test func aFileOpenForWritingIsNotFinishedByTheIdleRule() async throws {
        let bytes = NativeUploadFixture.text(30_000, seed: 4)
        let fixture = try NativeUploadFixture(bytes: bytes)
        let backend = try await fixture.backend()
        let writer = try #require(FileHandle(forWritingAtPath: fixture.upload.file))
        let uploader = try follower(fixture, backend: backend, options: FollowOptions(idleSeconds: 0.05))
        let finished = Mutex(false)
        let running = Task {
            let outcome = try await uploader.run { _ in }
            finished.withLock { $0 = true }
            return outcome
        }
        // Far beyond the idle time: the open write descriptor keeps the follow going.
        try await Task.sleep(for: .milliseconds(600))
        #expect(finished.withLock { $0 } == false)
        let tail = NativeUploadFixture.text(5_000, seed: 5)
        writer.seekToEndOfFile()
        writer.write(Data(tail))
        writer.closeFile()
        let outcome = try await running.value
        #expect(try fixture.object(at: outcome.receipt.location) == bytes + tail)
    }

    @Test func aTruncatedFileStopsTheUploadWithATypedErrorAndNothingCompletes() async throws {
        let bytes = NativeUploadFixture.text(5 * Self.part, seed: 6)
        let fixture = try NativeUploadFixture(bytes: bytes)
        let backend = try await fixture.backend()
        let writer = try #require(FileHandle(forWritingAtPath: fixture.upload.file))
        defer { writer.closeFile() }
        let uploader = try follower(fixture, backend: backend, options: FollowOptions(idleSeconds: 3600))
        let running = Task { try await uploader.run { _ in } }
        try await Task.sleep(for: .milliseconds(300))
        writer.truncateFile(atOffset: 1000)
        await #expect(throws: UploaderError.self) { _ = try await running.value }
        do {
            _ = try await running.value
        } catch let error as UploaderError {
            #expect(error.code == .fileTruncated)
        }
        // The receiver holds no object: nothing was completed.
        let objects = (try? FileManager.default.contentsOfDirectory(atPath: fixture.store.description + "/objects"))
        #expect(objects?.isEmpty ?? true)
    }

    @Test func aReplacedFileStopsTheUploadWithATypedError() async throws {
        let bytes = NativeUploadFixture.text(2 * Self.part, seed: 7)
        let fixture = try NativeUploadFixture(bytes: bytes)
        let backend = try await fixture.backend()
        let writer = try #require(FileHandle(forWritingAtPath: fixture.upload.file))
        defer { writer.closeFile() }
        let uploader = try follower(fixture, backend: backend, options: FollowOptions(idleSeconds: 3600))
        let running = Task { try await uploader.run { _ in } }
        try await Task.sleep(for: .milliseconds(300))
        // Another file renamed over the followed one (as an editor's atomic save does).
        try fixture.upload.write(NativeUploadFixture.text(3 * Self.part, seed: 8))
        do {
            _ = try await running.value
            Issue.record("the follow of a replaced file completed")
        } catch let error as UploaderError {
            #expect(error.code == .fileReplaced)
        }
    }

    @Test func aKilledFollowResumesFromWhatTheReceiverHoldsAndTheGrownFileIsStoredWhole() async throws {
        let first = NativeUploadFixture.text(3 * Self.part + 100, seed: 9)
        let fixture = try NativeUploadFixture(bytes: first)
        let backend = try await fixture.backend()
        let end = FollowEnd()
        let uploader = try follower(fixture, backend: backend, options: FollowOptions(idleSeconds: 3600, end: end))
        let acknowledged = Mutex(0)
        let running = Task {
            try await uploader.run { if case .chunkAcknowledged = $0 { acknowledged.withLock { $0 += 1 } } }
        }
        while acknowledged.withLock({ $0 }) < 3 { try await Task.sleep(for: .milliseconds(20)) }
        running.cancel()
        _ = try? await running.value
        // The file grew while no uploader ran.
        let tail = NativeUploadFixture.text(2 * Self.part + 7, seed: 10)
        let writer = try #require(FileHandle(forWritingAtPath: fixture.upload.file))
        writer.seekToEndOfFile()
        writer.write(Data(tail))
        writer.closeFile()
        let again = try follower(fixture, backend: backend, options: FollowOptions(idleSeconds: 0.1))
        let outcome = try await again.run { _ in }
        #expect(outcome.resume.level == .server)
        #expect(outcome.resume.reusedParts == 3)
        #expect(outcome.partsSent == outcome.partCount - 3)
        #expect(try fixture.object(at: outcome.receipt.location) == first + tail)
    }

    @Test func aChangedPrefixIsFoundOnResumeAndTheUploadStartsFresh() async throws {
        let first = NativeUploadFixture.text(3 * Self.part, seed: 11)
        let fixture = try NativeUploadFixture(bytes: first)
        let backend = try await fixture.backend()
        let end = FollowEnd()
        let uploader = try follower(fixture, backend: backend, options: FollowOptions(idleSeconds: 3600, end: end))
        let acknowledged = Mutex(0)
        let running = Task {
            try await uploader.run { if case .chunkAcknowledged = $0 { acknowledged.withLock { $0 += 1 } } }
        }
        while acknowledged.withLock({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(20)) }
        running.cancel()
        _ = try? await running.value
        // Same inode, first byte changed in place: the sent prefix no longer verifies.
        var changed = first
        changed[0] ^= 0xFF
        let writer = try #require(FileHandle(forWritingAtPath: fixture.upload.file))
        writer.seek(toFileOffset: 0)
        writer.write(Data([changed[0]]))
        writer.closeFile()
        let again = try follower(fixture, backend: backend, options: FollowOptions(idleSeconds: 0.1))
        let outcome = try await again.run { _ in }
        #expect(outcome.resume.level == .none)
        #expect(outcome.partsSent == outcome.partCount)
        #expect(try fixture.object(at: outcome.receipt.location) == changed)
    }
}

/// The follower's reader alone: sizes, truncation, replacement and the writer check.
@Suite struct FollowedFileTests {
    @Test func theFdinfoAccessModeTellsWritersFromReaders() {
        #expect(FollowedFile.accessModeIsWrite(fdinfo: "pos:\t0\nflags:\t0100001\nmnt_id:\t30\n"))
        #expect(FollowedFile.accessModeIsWrite(fdinfo: "pos:\t0\nflags:\t02\n"))
        #expect(!FollowedFile.accessModeIsWrite(fdinfo: "pos:\t0\nflags:\t0104000\n"))
        #expect(!FollowedFile.accessModeIsWrite(fdinfo: "pos:\t0\nmnt_id:\t30\n"))
        #expect(!FollowedFile.accessModeIsWrite(fdinfo: "flags:\tzz\n"))
    }

    @Test func anOpenWriteDescriptorIsSeenAndItsCloseIsReported() throws {
        let fixture = try UploadFixture(bytes: [1, 2, 3])
        defer { fixture.clean() }
        let file = try FollowedFile(path: FilePath(fixture.file))
        defer { file.close() }
        #expect(!file.writerHoldsFile())
        let writer = try #require(FileHandle(forWritingAtPath: fixture.file))
        #expect(file.writerHoldsFile())
        writer.seekToEndOfFile()
        writer.write(Data([4, 5]))
        writer.closeFile()
        #expect(!file.writerHoldsFile())
        #expect(try file.currentSize() == 5)
        #expect(try file.read(offset: 3, count: 2) == [4, 5])
        if file.usesInotify { #expect(file.drainEvents()) }
    }

    @Test func shrinkingAndReplacingAreTypedErrors() throws {
        let fixture = try UploadFixture(bytes: [UInt8](repeating: 7, count: 100))
        defer { fixture.clean() }
        let file = try FollowedFile(path: FilePath(fixture.file))
        defer { file.close() }
        #expect(try file.currentSize() == 100)
        let writer = try #require(FileHandle(forWritingAtPath: fixture.file))
        writer.truncateFile(atOffset: 40)
        writer.closeFile()
        #expect(throws: UploaderError.self) { _ = try file.read(offset: 0, count: 100) }
        do {
            _ = try file.currentSize()
            Issue.record("a shrunk file was accepted")
        } catch { #expect(error.code == .fileTruncated) }

        let other = try UploadFixture(bytes: [1])
        defer { other.clean() }
        let followed = try FollowedFile(path: FilePath(other.file))
        defer { followed.close() }
        try other.write([1, 2])  // atomic replace: a new inode at the path
        do {
            _ = try followed.currentSize()
            Issue.record("a replaced file was accepted")
        } catch { #expect(error.code == .fileReplaced) }
    }

    @Test func aDirectoryCannotBeFollowed() throws {
        let fixture = try UploadFixture(bytes: [])
        defer { fixture.clean() }
        do {
            _ = try FollowedFile(path: FilePath(fixture.directory))
            Issue.record("a directory was followed")
        } catch { #expect(error.code == .readFailed) }
    }
}
