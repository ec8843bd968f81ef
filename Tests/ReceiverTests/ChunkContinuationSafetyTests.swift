import AetherCoding
import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTestSupport
import Foundation
import Synchronization
import Testing

/// The directory store, with the commits of the regions it places made to fail on demand (as a failing fsync would),
/// everything else forwarded.
final class RegionCommitFailingStore: BlobStore {
    let inner: DirectoryBlobStore
    /// While true, `commit()` of a placed region's writer throws `.storageFailed` without committing.
    let failing = Atomic<Bool>(false)

    init(_ inner: DirectoryBlobStore) { self.inner = inner }

    var keepsCutPrefixes: Bool { inner.keepsCutPrefixes }
    func stage(_ key: BlobKey) throws(ReceiverError) -> any BlobWriter { try inner.stage(key) }
    func append(to key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        try inner.append(to: key, at: offset)
    }
    func place(into key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        FailingCommitWriter(try inner.place(into: key, at: offset), store: self)
    }
    func place(into key: BlobKey, at offset: Int64, keeping kept: Int64) throws(ReceiverError) -> any BlobWriter {
        FailingCommitWriter(try inner.place(into: key, at: offset, keeping: kept), store: self)
    }
    func reserve(_ key: BlobKey, size: Int64) throws(ReceiverError) { try inner.reserve(key, size: size) }
    func read(_ key: BlobKey, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ReceiverError)
        -> Int
    {
        try unsafe inner.read(key, at: offset, into: buffer)
    }
    func size(of key: BlobKey) throws(ReceiverError) -> Int64? { try inner.size(of: key) }
    func promote(_ from: BlobKey, to: BlobKey) throws(ReceiverError) { try inner.promote(from, to: to) }
    func alias(_ existing: BlobKey, as alias: BlobKey) throws(ReceiverError) { try inner.alias(existing, as: alias) }
    func delete(_ key: BlobKey) throws(ReceiverError) { try inner.delete(key) }
    func deleteWorkingBlobs(of upload: UploadID) throws(ReceiverError) { try inner.deleteWorkingBlobs(of: upload) }
    func keys() throws(ReceiverError) -> [BlobKey] { try inner.keys() }
    func discardStaging() throws(ReceiverError) -> Int { try inner.discardStaging() }
    func forEachPiece(
        of key: BlobKey, pieceSize: Int, _ body: (UnsafeRawBufferPointer) throws(ReceiverError) -> Void
    ) throws(ReceiverError) {
        try unsafe inner.forEachPiece(of: key, pieceSize: pieceSize, body)
    }
}

/// A region writer whose commit fails while its store's `failing` is set.
final class FailingCommitWriter: BlobWriter {
    let inner: any BlobWriter
    let store: RegionCommitFailingStore

    init(_ inner: any BlobWriter, store: RegionCommitFailingStore) {
        self.inner = inner
        self.store = store
    }

    var bytesWritten: Int64 { inner.bytesWritten }
    func write(_ bytes: UnsafeRawBufferPointer) throws(ReceiverError) { try unsafe inner.write(bytes) }
    func durable() throws(ReceiverError) { try inner.durable() }
    func commit() throws(ReceiverError) {
        if store.failing.load(ordering: .relaxed) {
            throw ReceiverError(.storageFailed, "the test failed this commit")
        }
        try inner.commit()
    }
    func discard() { inner.discard() }
    func abandon() { inner.abandon() }
    func retract() { inner.retract() }
}

/// What may never happen to a kept prefix (`docs/PROTOCOL.md` 3.2.2): one whose bytes were rewritten or undone is
/// never continued (its hash states would vouch for bytes no longer there), and an upload that ended or failed keeps
/// none.
@Suite struct ChunkContinuationSafetyTests {
    static let chunkSize = EngineFixture.chunkSize
    static let alice = ClientIdentity("alice")

    /// An engine over a fresh directory, with a store whose region commits fail on demand.
    final class FailingEngine {
        let directory: FilePath
        let store: RegionCommitFailingStore
        let engine: UploadEngine

        init() throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "aether-continuation-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            directory = FilePath(path)
            store = RegionCommitFailingStore(try DirectoryBlobStore(root: directory))
            engine = UploadEngine(
                blobs: store, catalog: try SQLiteUploadCatalog(path: directory.appending("catalog.sqlite3")),
                limits: EngineFixture.smallLimits, clock: ManualClock())
        }

        deinit { try? FileManager.default.removeItem(atPath: directory.description) }

        func send(_ content: EngineFixture.NativeContent, _ index: Int, to id: UploadID) throws -> ChunkOutcome {
            let sink = try engine.openChunk(id, index: index, descriptor: content.descriptor(index), owner: alice)
            try sink.write(content.chunks[index])
            return try sink.finish()
        }

        func object(_ id: UploadID) throws -> [UInt8] {
            Array(try Data(contentsOf: URL(fileURLWithPath: store.inner.path(of: .object(id)).description)))
        }
    }

    /// Regression: a parity rebuild rewrote the region of a chunk whose prefix was kept, and when its commit failed
    /// (the region zeroed) the prefix stayed: a continuation from it was taken, its resumed SHA-256 matched, and the
    /// chunk was stored over zeros.
    @Test func aRebuildThatFailsOverAKeptPrefixLeavesNoPrefixToContinue() throws {
        let setup = try FailingEngine()
        let engine = setup.engine
        let content = EngineFixture.NativeContent(
            bytes: EngineFixture.bytes(3 * Self.chunkSize, seed: 31), chunkSize: Self.chunkSize, session: "s")
        var request = content.newUpload
        request.parity = ParityLayout(data: 3, parity: 2)
        let record = try engine.create(request, owner: Self.alice)
        let cut = try engine.openChunk(record.id, index: 1, descriptor: content.descriptor(1), owner: Self.alice)
        try cut.write(Array(content.chunks[1].prefix(5000)))
        #expect(cut.interrupted())
        for index in [0, 2] { #expect(try setup.send(content, index, to: record.id) == .stored) }
        // A parity shard makes chunk 1 rebuildable; writing its region fails at the commit, which zeroes it.
        let parity = try ReedSolomonCode(dataShards: 3, parityShards: 2).encode(content.chunks)[0]
        setup.store.failing.store(true, ordering: .relaxed)
        let shard = try engine.openParity(
            record.id, group: 0, shard: 0,
            descriptor: ChunkDescriptor(
                length: parity.count, crc32c: CRC32C.checksum(parity), sha256: SHA256.hash(parity)),
            owner: Self.alice)
        try shard.write(parity)
        #expect(receiverError { _ = try shard.finish() }?.code == .storageFailed)
        setup.store.failing.store(false, ordering: .relaxed)
        #expect(try engine.partials(record.id, owner: Self.alice).isEmpty)
        // Taken, the continuation would store the chunk over the zeros, its SHA-256 resumed from the bytes once there.
        let refused = receiverError {
            let sink = try engine.openChunk(
                record.id, index: 1, descriptor: content.descriptor(1), owner: Self.alice, from: 5000)
            try sink.write(Array(content.chunks[1].dropFirst(5000)))
            _ = try sink.finish()
        }
        #expect(refused?.code == .partialMismatch)
        #expect(refused?.offset == 0)
        #expect(try setup.send(content, 1, to: record.id) == .stored)
        _ = try engine.complete(record.id, owner: Self.alice, claim: content.claim)
        #expect(try setup.object(record.id) == content.bytes)
    }

    /// Regression: a request still writing when its upload was cancelled kept its prefix after the cancel had
    /// dropped the upload's partials, a place in the bounded table no continuation could ever use.
    @Test func aChunkCutAfterItsUploadWasCancelledKeepsNoPrefix() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(3 * Self.chunkSize + 1000)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        let sink = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice)
        try sink.write(Array(content.chunks[1].prefix(5000)))
        try fixture.engine.cancel(record.id, owner: fixture.alice)
        #expect(!sink.interrupted())
        #expect(fixture.engine.partialCount == 0)
    }

    /// Regression: an upload whose commitment chain broke (failed: it takes no more chunks) kept its prefixes.
    @Test func anUploadWhoseChainBreaksDropsItsPrefixes() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(3 * Self.chunkSize + 1000)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        let cut = try fixture.engine.openChunk(
            record.id, index: 2, descriptor: content.descriptor(2), owner: fixture.alice)
        try cut.write(Array(content.chunks[2].prefix(3000)))
        #expect(cut.interrupted())
        #expect(fixture.engine.partialCount == 1)
        var wrong = content.descriptor(0)
        wrong.link = SHA256.hash([1, 2, 3])
        let sink = try fixture.engine.openChunk(record.id, index: 0, descriptor: wrong, owner: fixture.alice)
        try sink.write(content.chunks[0])
        #expect(receiverError { _ = try sink.finish() }?.code == .chainBroken)
        #expect(fixture.engine.partialCount == 0)
    }

    /// Regression: with the bounds at 0 (no `resume-chunk` advertised) a cut chunk still left its prefix in place and
    /// reported it kept, and a request in flight was listed as a prefix to continue.
    @Test func withNoRoomForPartialsACutChunkIsUndoneAsBeforeAndNothingIsListed() throws {
        var limits = EngineFixture.smallLimits
        limits.maximumPartials = 0
        let fixture = try EngineFixture(limits: limits)
        let content = fixture.native(3 * Self.chunkSize + 1000)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        let sink = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice)
        try sink.write(Array(content.chunks[1].prefix(5000)))
        #expect(try fixture.engine.partials(record.id, owner: fixture.alice).isEmpty)
        #expect(!sink.interrupted())
        let stream = try Data(
            contentsOf: URL(fileURLWithPath: fixture.directory.description + "/streams/" + record.id.rawValue))
        #expect(stream[Self.chunkSize..<2 * Self.chunkSize].allSatisfy { $0 == 0 })
    }

    /// A continuation that stalls is taken over by a second one from the same offset: the first hands over the longer
    /// prefix it reached, the second is refused with it before writing anything, the first can write nothing more,
    /// and a third from the longer prefix stores the chunk byte-identical.
    @Test func aContinuationTakenOverByAnotherHandsOverTheLongerPrefixAndOnlyThatIsContinued() throws {
        var limits = EngineFixture.smallLimits
        limits.chunkClaimWaitSeconds = 0.05
        let fixture = try EngineFixture(limits: limits)
        let content = fixture.native(3 * Self.chunkSize + 1000)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        let cut = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice)
        try cut.write(Array(content.chunks[1].prefix(5000)))
        #expect(cut.interrupted())
        let first = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice, from: 5000)
        try first.write(Array(content.chunks[1][5000..<8000]))
        let second = receiverError {
            _ = try fixture.engine.openChunk(
                record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice, from: 5000)
        }
        #expect(second?.code == .partialMismatch)
        #expect(second?.offset == 8000)
        #expect(receiverError { try first.write(Array(content.chunks[1][8000..<9000])) }?.code == .unavailable)
        #expect(receiverError { _ = try first.finish() } != nil)
        let third = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice, from: 8000)
        try third.write(Array(content.chunks[1].dropFirst(8000)))
        #expect(try third.finish() == .stored)
        for index in [0, 2, 3] { try fixture.send(content, index, to: record.id) }
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
        #expect(fixture.engine.partialCount == 0)
    }
}
