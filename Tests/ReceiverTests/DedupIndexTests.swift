import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherSecurity
import AetherTestServers
import Foundation
import Synchronization
import Testing

/// A blob store that counts the bytes read through it (and forwards everything to the store it wraps).
final class ByteCountingBlobStore: BlobStore {
    let inner: any BlobStore
    private let counted = Atomic<Int>(0)

    init(_ inner: any BlobStore) { self.inner = inner }

    /// Bytes read since the last `reset`.
    var bytesRead: Int { counted.load(ordering: .relaxed) }
    func reset() { counted.store(0, ordering: .relaxed) }

    func stage(_ key: BlobKey) throws(ReceiverError) -> any BlobWriter { try inner.stage(key) }
    func append(to key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        try inner.append(to: key, at: offset)
    }
    func place(into key: BlobKey, at offset: Int64) throws(ReceiverError) -> any BlobWriter {
        try inner.place(into: key, at: offset)
    }
    func reserve(_ key: BlobKey, size: Int64) throws(ReceiverError) { try inner.reserve(key, size: size) }
    func read(_ key: BlobKey, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ReceiverError)
        -> Int
    {
        let count = try unsafe inner.read(key, at: offset, into: buffer)
        counted.add(count, ordering: .relaxed)
        return count
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
        try unsafe inner.forEachPiece(of: key, pieceSize: pieceSize) { piece throws(ReceiverError) in
            counted.add(piece.count, ordering: .relaxed)
            try unsafe body(piece)
        }
    }
}

/// The dedup index: per owner and chunk size, kept in both catalogues (schema 3, migrated from 2), and what a
/// dedup probe costs the receiver.
@Suite struct DedupIndexTests {
    static let chunkSize = EngineFixture.chunkSize

    /// An engine over `directory` whose blob store counts reads.
    static func countingEngine(_ directory: FilePath, catalogue: CatalogueKind) throws -> (
        UploadEngine, ByteCountingBlobStore
    ) {
        let blobs = ByteCountingBlobStore(try DirectoryBlobStore(root: directory))
        let catalog: any UploadCatalog =
            catalogue == .postgres
            ? try PostgresCatalog(url: try PostgresTestServer.sharedDatabase())
            : try SQLiteUploadCatalog(path: directory.appending("catalog.sqlite3"))
        let limits = ReceiverLimits(minimumChunkSize: chunkSize, maximumOpenUploadsPerClient: 8)
        return (UploadEngine(blobs: blobs, catalog: catalog, limits: limits, clock: ManualClock()), blobs)
    }

    /// Stores `content` as `owner`'s completed native upload on `engine`.
    static func store(_ content: EngineFixture.NativeContent, on engine: UploadEngine, owner: ClientIdentity) throws
        -> UploadID
    {
        let record = try engine.create(content.newUpload, owner: owner)
        for index in content.chunks.indices {
            let sink = try engine.openChunk(
                record.id, index: index, descriptor: content.descriptor(index), owner: owner)
            try sink.write(content.chunks[index])
            _ = try sink.finish()
        }
        _ = try engine.complete(record.id, owner: owner, claim: content.claim)
        return record.id
    }

    static func probe(_ content: EngineFixture.NativeContent) -> NewUpload {
        var request = content.newUpload
        request.contentID = ACI(digest: SHA256.hash(content.bytes)).description
        return request
    }

    /// 6(a): a create naming a stored object's content id read and hashed the whole object, before anything was
    /// proven; now it reads nothing of it, and checking an answer reads the challenge's ranges only, whatever the
    /// object's size.
    @Test(arguments: CatalogueKind.allCases, [1 << 20, 8 << 20])
    func aDedupProbeReadsNothingOfTheObjectAndAnAnswerReadsABoundedAmount(_ catalogue: CatalogueKind, size: Int)
        throws
    {
        let directory = FilePath(
            FileManager.default.temporaryDirectory.appendingPathComponent("aether-dedup-\(UUID().uuidString)").path)
        try FileManager.default.createDirectory(atPath: directory.description, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory.description) }
        let (engine, blobs) = try Self.countingEngine(directory, catalogue: catalogue)
        let alice = ClientIdentity("alice")
        let content = EngineFixture.NativeContent(
            bytes: EngineFixture.bytes(size, seed: UInt64(size)), chunkSize: Self.chunkSize, session: "cost")
        _ = try Self.store(content, on: engine, owner: alice)
        blobs.reset()
        for _ in 0..<5 {
            let record = try engine.create(Self.probe(content), owner: alice)
            #expect(try engine.status(record.id, owner: alice).possessionChallenge != nil)
            try engine.cancel(record.id, owner: alice)
        }
        #expect(blobs.bytesRead == 0)
        // A proof: the receiver reads the 32 ranges of 4 KiB it asked, not the object.
        let record = try engine.create(Self.probe(content), owner: alice)
        let challenge = try PossessionChallenge(
            serialized: try #require(try engine.status(record.id, owner: alice).possessionChallenge))
        let source = InMemoryPossessionSource(content.bytes)
        let prover = try ProofOfPossessionProver(
            source: source, chunkSize: UInt32(Self.chunkSize),
            chunkHashes: try ProofOfPossessionProver.chunkHashes(of: source, chunkSize: UInt32(Self.chunkSize)))
        blobs.reset()
        let receipt = try engine.answerPossession(
            record.id, response: try prover.respond(to: challenge).serialized, owner: alice)
        #expect(blobs.bytesRead <= UploadEngine.possessionReadBound)
        #expect(UploadEngine.possessionReadBound == 128 * 1024)
        #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
        #expect(receipt.merkleRoot == (try content.claim).merkleRoot)
        #expect(receipt.chainHead == (try content.claim).chainHead)
        // A garbage answer sealed correctly costs the same bound, never the whole object.
        let other = try engine.create(Self.probe(content), owner: alice)
        let second = try PossessionChallenge(
            serialized: try #require(try engine.status(other.id, owner: alice).possessionChallenge))
        var wrong = content.bytes
        for index in wrong.indices where index % 4096 == 0 { wrong[index] ^= 1 }
        let liar = try ProofOfPossessionProver(
            source: InMemoryPossessionSource(wrong), chunkSize: UInt32(Self.chunkSize),
            chunkHashes: content.hashes)
        blobs.reset()
        #expect(
            receiverError {
                _ = try engine.answerPossession(
                    other.id, response: try liar.respond(to: second).serialized, owner: alice)
            }?.code == .possessionFailed)
        #expect(blobs.bytesRead <= UploadEngine.possessionReadBound)
    }

    /// 7: the index is per owner; another owner's object is found only in the shared pool (owner nil), and only at
    /// the chunk size whose digests the upload kept.
    @Test(arguments: CatalogueKind.allCases) func theIndexIsPerOwnerAndChunkSize(_ catalogue: CatalogueKind) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(3 * EngineFixture.chunkSize)
        let id = try Self.store(content, on: fixture.engine, owner: fixture.alice)
        let contentID = ACI(digest: SHA256.hash(content.bytes)).description
        let catalog = fixture.engine.catalog
        let found = try #require(
            try catalog.object(contentID: contentID, chunkSize: Self.chunkSize, owner: fixture.alice))
        #expect(found.upload == id)
        #expect(found.owner == fixture.alice)
        #expect(try catalog.object(contentID: contentID, chunkSize: Self.chunkSize, owner: fixture.mallory) == nil)
        #expect(try catalog.object(contentID: contentID, chunkSize: Self.chunkSize, owner: nil)?.upload == id)
        #expect(try catalog.object(contentID: contentID, chunkSize: 2 * Self.chunkSize, owner: fixture.alice) == nil)
        // Mallory stores the same bytes: her own entry, found for her.
        let hers = try Self.store(content, on: fixture.engine, owner: fixture.mallory)
        #expect(
            try catalog.object(contentID: contentID, chunkSize: Self.chunkSize, owner: fixture.mallory)?.upload == hers)
        #expect(try catalog.object(contentID: contentID, chunkSize: Self.chunkSize, owner: fixture.alice)?.upload == id)
        // A byte stream keeps no chunk digests: its entry is at chunk size 0, never offered to a native create.
        let tus = try fixture.engine.create(NewUpload(uploadProtocol: .tus, size: 5), owner: fixture.alice)
        try fixture.append([1, 2, 3, 4, 5], to: tus.id, at: 0)
        let tusID = ACI(digest: SHA256.hash([1, 2, 3, 4, 5])).description
        #expect(try catalog.object(contentID: tusID, chunkSize: 0, owner: fixture.alice)?.upload == tus.id)
    }

    /// A schema-2 catalogue's index (one entry per content id) is migrated: each entry takes its upload's owner and
    /// chunk size, and dedup keeps working.
    @Test(arguments: CatalogueKind.allCases) func aVersionTwoIndexIsMigrated(_ catalogue: CatalogueKind) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(2 * EngineFixture.chunkSize + 7)
        let id = try Self.store(content, on: fixture.engine, owner: fixture.alice)
        if let url = fixture.postgresURL {
            let database = try #require(url.split(separator: "?").first?.split(separator: "/").last.map(String.init))
            try PostgresTestServer.shared.get().psql(
                database,
                """
                DROP INDEX objects_upload; DROP INDEX objects_content;
                ALTER TABLE objects DROP CONSTRAINT objects_pkey;
                ALTER TABLE objects DROP COLUMN owner, DROP COLUMN chunk_size;
                ALTER TABLE objects ADD PRIMARY KEY (content_id);
                DELETE FROM schema_migrations WHERE version = 3;
                """)
        } else {
            let raw = Process()
            raw.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            raw.arguments = [
                "python3", "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
                    + "c.execute('CREATE TABLE o2 (content_id TEXT PRIMARY KEY, upload TEXT NOT NULL REFERENCES "
                    + "uploads(id), size INTEGER NOT NULL, file_sha256 BLOB NOT NULL)'); "
                    + "c.execute('INSERT INTO o2 SELECT content_id, upload, size, file_sha256 FROM objects'); "
                    + "c.execute('DROP TABLE objects'); c.execute('ALTER TABLE o2 RENAME TO objects'); "
                    + "c.execute('PRAGMA user_version=2'); c.commit()",
                fixture.directory.appending("catalog.sqlite3").description,
            ]
            try raw.run()
            raw.waitUntilExit()
            #expect(raw.terminationStatus == 0)
        }
        try fixture.restart()
        let contentID = ACI(digest: SHA256.hash(content.bytes)).description
        let catalog = fixture.engine.catalog
        #expect(try catalog.integrityCheck())
        #expect(try catalog.object(contentID: contentID, chunkSize: Self.chunkSize, owner: fixture.alice)?.upload == id)
        #expect(try catalog.object(contentID: contentID, chunkSize: Self.chunkSize, owner: fixture.mallory) == nil)
        let probe = try fixture.engine.create(Self.probe(content), owner: fixture.alice)
        #expect(try fixture.engine.status(probe.id, owner: fixture.alice).possessionChallenge != nil)
    }
}
