import AetherIO
import AetherReceiver
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct EngineRecoveryTests {
    @Test(arguments: CatalogueKind.allCases)
    func recoveryRemovesWhatTheCatalogueNeverCommittedAndKeepsEverythingAcknowledged(_ catalogue: CatalogueKind) throws
    {
        let fixture = try EngineFixture(catalogue: catalogue)
        let store = try fixture.blobStore
        let content = fixture.native(3 * EngineFixture.chunkSize)
        let native = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try fixture.send(content, 0, to: native.id)
        let stream = try fixture.engine.create(NewUpload(uploadProtocol: .ietf, size: 100), owner: fixture.alice)
        try fixture.append(EngineFixture.bytes(40), to: stream.id, at: 0)
        // Not this store's: a directory and a file of other names in staging are left as they are (a directory
        // there used to stop the start: "unlink failed: Is a directory").
        try FileManager.default.createDirectory(
            atPath: "\(fixture.directory)/staging/not-ours", withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: "\(fixture.directory)/staging/notes.txt", contents: Data("kept".utf8)))
        let acknowledged = try fixture.storeSnapshot()

        // What a crash leaves: a staging file, a chunk renamed into place without its receipt, a stream with
        // bytes past its committed offset, an object assembled but not recorded, blobs of an unknown upload.
        let staged = try store.stage(.chunk(native.id, index: 2))
        try staged.write(EngineFixture.bytes(10))
        try staged.durable()
        let orphan = try store.stage(.chunk(native.id, index: 1))
        try orphan.write(content.chunks[1])
        try orphan.commit()
        let tail = try store.append(to: .stream(stream.id), at: 40)
        try tail.write(EngineFixture.bytes(7))
        try tail.commit()
        let assembled = try store.stage(.object(native.id))
        try assembled.write(EngineFixture.bytes(5))
        try assembled.commit()
        let stranger = try UploadID("bbbbbbbbbbbbbbbbbbbbbbbbba")
        let strangerChunk = try store.stage(.chunk(stranger, index: 0))
        try strangerChunk.write([1])
        try strangerChunk.commit()
        // The staged writer stays open (as if the process died); recovery runs in a "new process".
        try fixture.restart()
        let report = try fixture.engine.recover()
        #expect(report.stagingDiscarded == 1)
        #expect(report.blobsRemoved == 2)
        #expect(report.streamsTruncated == 1)
        #expect(report.assembliesRolledBack == 1)
        #expect(report.catalogIntact)
        let recovered = try fixture.storeSnapshot()
        #expect(recovered == acknowledged, "\(Set(recovered.keys).symmetricDifference(acknowledged.keys))")
        withExtendedLifetime(staged) {}

        // Both uploads resume and complete.
        for index in 1..<3 { try fixture.send(content, index, to: native.id) }
        _ = try fixture.engine.complete(native.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(native.id) == content.bytes)
        #expect(try fixture.append(EngineFixture.bytes(60, seed: 3), to: stream.id, at: 40).completed)
        #expect(try fixture.objectBytes(stream.id) == EngineFixture.bytes(40) + EngineFixture.bytes(60, seed: 3))
    }

    @Test(arguments: CatalogueKind.allCases) func aStreamObjectPromotedButNotRecordedReturnsToItsStream(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let stream = try fixture.engine.create(NewUpload(uploadProtocol: .tus, size: 8), owner: fixture.alice)
        try fixture.append([1, 2, 3, 4, 5, 6, 7, 8], to: stream.id, at: 0)
        // Play a crash between the rename into objects/ and the catalogue's commit: undo the commit's record.
        var record = try #require(try fixture.engine.catalog.record(stream.id))
        record.state = .open
        try fixture.engine.catalog.update(record, event: "test: as before the completion's commit")
        try fixture.restart()
        let report = try fixture.engine.recover()
        #expect(report.assembliesRolledBack == 1)
        #expect(!fixture.objectExists(stream.id))
        #expect(try fixture.blobStore.size(of: .stream(stream.id)) == 8)
        // The client's completing request (an empty append at the end) finishes it.
        #expect(try fixture.append([], to: stream.id, at: 8).completed)
        #expect(try fixture.objectBytes(stream.id) == [1, 2, 3, 4, 5, 6, 7, 8])
    }

    /// A child process appends through the engine and is killed with SIGKILL in the middle of an append; after a
    /// restart every acknowledged byte is there, the unacknowledged ones are not, no object is visible and the
    /// catalogue passes `PRAGMA integrity_check`.
    @Test func aKilledWriterLosesNothingAcknowledged() async throws {
        let fixture = try EngineFixture()
        let path = fixture.directory.description
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            let fixed: @Sendable (Int) -> [UInt8] = { [UInt8](repeating: 7, count: $0) }
            guard let blobs = try? DirectoryBlobStore(root: FilePath(path)),
                let catalog = try? SQLiteUploadCatalog(path: FilePath(path + "/catalog.sqlite3"))
            else { exit(2) }
            let engine = UploadEngine(
                blobs: blobs, catalog: catalog, limits: EngineFixture.smallLimits, random: fixed)
            let owner = ClientIdentity("alice")
            guard let record = try? engine.create(NewUpload(uploadProtocol: .tus, size: 1 << 20), owner: owner)
            else { exit(3) }
            for step in 0..<3 {
                let piece = EngineFixture.bytes(100_000, seed: UInt64(step))
                guard let sink = try? engine.openAppend(record.id, offset: Int64(step * 100_000), owner: owner),
                    (try? sink.write(piece)) != nil, (try? sink.finish()) != nil
                else { exit(4) }
            }
            guard let sink = try? engine.openAppend(record.id, offset: 300_000, owner: owner),
                (try? sink.write(EngineFixture.bytes(50_000, seed: 9))) != nil
            else { exit(5) }
            kill(getpid(), SIGKILL)
        }
        try fixture.restart()
        let report = try fixture.engine.recover()
        #expect(report.catalogIntact)
        #expect(report.streamsTruncated == 1)
        let open = try fixture.engine.catalog.uploads(in: [.open])
        #expect(open.count == 1)
        let id = try #require(open.first).id
        let status = try fixture.engine.status(id, owner: fixture.alice)
        #expect(status.offset == 300_000)
        #expect(!fixture.objectExists(id))
        let expected = (0..<3).flatMap { EngineFixture.bytes(100_000, seed: UInt64($0)) }
        #expect(try fixture.blobStore.size(of: .stream(id)) == 300_000)
        let rest = EngineFixture.bytes((1 << 20) - 300_000, seed: 11)
        #expect(try fixture.append(rest, to: id, at: 300_000).completed)
        #expect(try fixture.objectBytes(id) == expected + rest)
    }
}
