import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// The real `UploadEngine` over an `S3BlobStore` on moto and a SQLite catalogue: native, IETF and tus uploads
/// complete and the object in the bucket is the file (read back with boto3).
@Suite struct S3BlobEngineTests {
    final class Fleet: Sendable {
        let store: S3BlobStore
        let engine: UploadEngine
        let directory: String

        init(store: S3BlobStore, limits: ReceiverLimits = ReceiverLimits(minimumChunkSize: 64 * 1024)) throws {
            directory =
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "aether-s3engine-\(UUID().uuidString)"
                ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            self.store = store
            engine = UploadEngine(
                blobs: store, catalog: try SQLiteUploadCatalog(path: FilePath(directory + "/catalog.sqlite3")),
                limits: limits)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func objectInBucket(_ id: UploadID) throws -> MotoTestServer.Object {
            try MotoTestServer.shared.get().object(bucket: store.client.bucket, key: "fleet/a/objects/\(id)")
        }
    }

    static let alice = ClientIdentity("alice")

    @Test(arguments: [256 * 1024, 6 << 20]) func aNativeUploadCompletesIntoAnObjectInTheBucket(_ chunkSize: Int)
        async throws
    {
        // No floor of the store's own: pieces of 256 KiB are under S3's part floor (read back and sent again).
        let fleet = try Fleet(
            store: try await MotoTestServer.shared.get().store(options: S3BlobStore.Options(minimumChunkSize: 0)))
        let content = EngineFixture.NativeContent(
            bytes: EngineFixture.bytes(13 << 20, seed: 11), chunkSize: chunkSize, session: "s3-session")
        let id = try await MotoTestServer.onThread { () throws -> UploadID in
            let record = try fleet.engine.create(content.newUpload, owner: Self.alice)
            // Out of order, so the stream has gaps until the end.
            for index in (0..<content.chunks.count).reversed() {
                let sink = try fleet.engine.openChunk(
                    record.id, index: index, descriptor: content.descriptor(index), owner: Self.alice)
                try sink.write(content.chunks[index])
                #expect(try sink.finish() == .stored)
            }
            let nonce = [UInt8](repeating: 7, count: 32)
            let items = try content.items([0, content.chunks.count - 1])
            let answers = try fleet.engine.challenge(record.id, items: items, nonce: nonce, owner: Self.alice)
            #expect(answers.map(\.sha256) == [content.hashes[0], content.hashes[content.chunks.count - 1]])
            #expect(try answers.map(\.mac) == items.map { try content.mac($0, nonce: nonce, id: record.id) })
            let receipt = try fleet.engine.complete(record.id, owner: Self.alice, claim: content.claim)
            #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
            return record.id
        }
        let object = try fleet.objectInBucket(id)
        #expect(object.size == content.bytes.count)
        #expect(object.sha256 == SHA256.hash(content.bytes).hex)
        // The pieces are gone once the completion is recorded.
        #expect(try await MotoTestServer.onThread { try fleet.store.size(of: .stream(id)) } == nil)
    }

    /// By default the store takes no chunk under S3's part floor, so that every piece but the last is copied server
    /// side at completion; the engine advertises and enforces the floor over its own smaller limit.
    @Test func theStoreRaisesTheSmallestChunkToTheS3PartFloor() async throws {
        let fleet = try Fleet(store: try await MotoTestServer.shared.get().store())
        #expect(fleet.store.minimumChunkSize == 5 << 20)
        #expect(fleet.engine.minimumChunkSize == 5 << 20)
        let small = EngineFixture.NativeContent(
            bytes: EngineFixture.bytes(3 << 20, seed: 15), chunkSize: 1 << 20, session: "s3-floor")
        let large = EngineFixture.NativeContent(
            bytes: EngineFixture.bytes(11 << 20, seed: 16), chunkSize: 5 << 20, session: "s3-floor")
        try await MotoTestServer.onThread {
            do {
                _ = try fleet.engine.create(small.newUpload, owner: Self.alice)
                Issue.record("a 1 MiB chunk was taken under a 5 MiB floor")
            } catch let error as ReceiverError {
                #expect(error.code == .malformedRequest)
                #expect(error.message.contains("from 5242880 to"))
            }
            let record = try fleet.engine.create(large.newUpload, owner: Self.alice)
            for index in large.chunks.indices {
                let sink = try fleet.engine.openChunk(
                    record.id, index: index, descriptor: large.descriptor(index), owner: Self.alice)
                try sink.write(large.chunks[index])
                #expect(try sink.finish() == .stored)
            }
            let receipt = try fleet.engine.complete(record.id, owner: Self.alice, claim: large.claim)
            #expect(receipt.fileSHA256 == SHA256.hash(large.bytes))
        }
        // A floor of 0 leaves the engine's own limit.
        let open = try Fleet(
            store: try await MotoTestServer.shared.get().store(options: S3BlobStore.Options(minimumChunkSize: 0)))
        #expect(open.engine.minimumChunkSize == 64 * 1024)
    }

    @Test(arguments: [UploadProtocol.ietf, .tus]) func aByteStreamUploadCompletesIntoAnObjectInTheBucket(
        _ uploadProtocol: UploadProtocol
    ) async throws {
        let fleet = try Fleet(store: try await MotoTestServer.shared.get().store())
        let content = EngineFixture.bytes(7 << 20, seed: 12)
        let id = try await MotoTestServer.onThread { () throws -> UploadID in
            let record = try fleet.engine.create(
                NewUpload(uploadProtocol: uploadProtocol, size: Int64(content.count)), owner: Self.alice)
            var offset = 0
            for length in [100_000, 3 << 20, content.count - 100_000 - (3 << 20)] {
                let sink = try fleet.engine.openAppend(
                    record.id, offset: Int64(offset), owner: Self.alice, length: Int64(length))
                try sink.write(Array(content[offset..<(offset + length)]))
                let result = try sink.finish()
                offset += length
                #expect(result.offset == Int64(offset))
            }
            #expect(try fleet.engine.status(record.id, owner: Self.alice).isComplete)
            return record.id
        }
        let object = try fleet.objectInBucket(id)
        #expect(object.size == content.count)
        #expect(object.sha256 == SHA256.hash(content).hex)
    }

    /// A receiver that starts while another is between writing an append's bytes and committing them leaves those
    /// bytes alone: start-up recovery changes nothing in a shared store (on a store of its own it would cut the
    /// stream back to the committed offset).
    @Test func aReceiverStartingBesideAnotherLeavesItsInFlightWriteAlone() async throws {
        let fleet = try Fleet(store: try await MotoTestServer.shared.get().store())
        let content = EngineFixture.bytes(400_000, seed: 14)
        try await MotoTestServer.onThread {
            let record = try fleet.engine.create(
                NewUpload(uploadProtocol: .tus, size: Int64(content.count)), owner: Self.alice)
            let first = try fleet.engine.openAppend(record.id, offset: 0, owner: Self.alice, length: 100_000)
            try first.write(Array(content[0..<100_000]))
            #expect(try first.finish().offset == 100_000)
            // The other receiver's append: its bytes are stored, its catalogue commit is still to come.
            let writer = try fleet.store.append(to: .stream(record.id), at: 100_000)
            try writer.write(Array(content[100_000..<250_000]))
            try writer.commit()
            let starting = UploadEngine(
                blobs: fleet.store,
                catalog: try SQLiteUploadCatalog(path: FilePath(fleet.directory + "/catalog.sqlite3")))
            let report = try starting.recover()
            #expect(report.catalogIntact)
            #expect(report.blobsRemoved == 0 && report.streamsTruncated == 0 && report.assembliesRolledBack == 0)
            #expect(try fleet.store.size(of: .stream(record.id)) == 250_000)
            var held = [UInt8](repeating: 0, count: 150_000)
            let read = try unsafe held.withUnsafeMutableBytes { raw in
                try unsafe fleet.store.read(.stream(record.id), at: 100_000, into: raw)
            }
            #expect(read == 150_000)
            #expect(SHA256.hash(held) == SHA256.hash(Array(content[100_000..<250_000])))
        }
    }

    @Test func anAppendWhileS3RefusesIs503AndTheRetryLosesNothing() async throws {
        let moto = try MotoTestServer()
        let store = S3BlobStore(
            client: try await moto.client(bucket: "refusing", retry: S3RetryPolicy(maximumAttempts: 2)),
            prefix: "fleet/a")
        let fleet = try Fleet(store: store)
        let content = EngineFixture.bytes(300_000, seed: 13)
        let record = try await MotoTestServer.onThread {
            let record = try fleet.engine.create(
                NewUpload(uploadProtocol: .tus, size: Int64(content.count)), owner: Self.alice)
            let sink = try fleet.engine.openAppend(record.id, offset: 0, owner: Self.alice, length: 100_000)
            try sink.write(Array(content[0..<100_000]))
            #expect(try sink.finish().offset == 100_000)
            return record
        }
        try moto.stop()
        let refused = try await MotoTestServer.onThread { () -> ReceiverError? in
            receiverError {
                let sink = try fleet.engine.openAppend(record.id, offset: 100_000, owner: Self.alice, length: 200_000)
                try sink.write(Array(content[100_000...]))
                _ = try sink.finish()
            }
        }
        #expect(refused?.code == .unavailable)
        #expect(refused?.code.status == 503)
        try moto.start()
        try await MotoTestServer.onThread {
            #expect(try fleet.engine.status(record.id, owner: Self.alice).offset == 100_000)
            let sink = try fleet.engine.openAppend(record.id, offset: 100_000, owner: Self.alice, length: 200_000)
            try sink.write(Array(content[100_000...]))
            #expect(try sink.finish().completed)
        }
        let object = try moto.object(bucket: "refusing", key: "fleet/a/objects/\(record.id)")
        #expect(object.sha256 == SHA256.hash(content).hex)
    }
}
