import AetherIO
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// The stores every conformance test runs against.
enum BlobStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case directory
    case s3
    var testDescription: String { rawValue }

    /// A new, empty store of this kind (S3: a bucket of its own on the shared moto server).
    func make(options: S3BlobStore.Options = S3BlobStore.Options()) async throws -> any BlobStore {
        switch self {
        case .directory:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "aether-blobs-\(UUID().uuidString)"
            ).path
            return try DirectoryBlobStore(root: FilePath(path))
        case .s3:
            return try await MotoTestServer.shared.get().store(options: options)
        }
    }
}

/// What every `BlobStore` must do, run against the embedded `DirectoryBlobStore` and the fleet's `S3BlobStore` (on
/// moto). Store calls block, so they run on a thread of their own (`MotoTestServer.onThread`).
@Suite struct BlobStoreConformanceTests {
    let id = Self.newID()

    /// A fresh valid upload id.
    static func newID() -> UploadID {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        // The 26th character carries 2 bits of the 128 and 2 zero bits: a, e, i, ... (every 4th of base32).
        let text = String((0..<25).map { _ in letters[Int.random(in: 0..<letters.count)] }) + "e"
        return (try? UploadID(text)) ?? Self.fallback
    }

    static let fallback = (try? UploadID("aaaaaaaaaaaaaaaaaaaaaaaaaa"))!

    static func read(_ store: any BlobStore, _ key: BlobKey, at offset: Int64, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0xEE, count: count)
        let got = try unsafe bytes.withUnsafeMutableBytes { raw in try unsafe store.read(key, at: offset, into: raw) }
        return Array(bytes[0..<got])
    }

    @Test(arguments: BlobStoreKind.allCases) func aStagedBlobIsInvisibleUntilCommittedAndADiscardLeavesNothing(
        _ kind: BlobStoreKind
    ) async throws {
        let store = try await kind.make()
        let id = self.id
        let bytes = EngineFixture.bytes(70_000, seed: 3)
        try await MotoTestServer.onThread {
            let writer = try store.stage(.parity(id, group: 0, shard: 1))
            try writer.write(bytes)
            try writer.durable()
            #expect(try store.size(of: .parity(id, group: 0, shard: 1)) == nil)
            try writer.commit()
            #expect(try store.size(of: .parity(id, group: 0, shard: 1)) == 70_000)
            #expect(try store.readAll(.parity(id, group: 0, shard: 1), expectedLength: 70_000) == bytes)

            let dropped = try store.stage(.parity(id, group: 1, shard: 0))
            try dropped.write(bytes)
            dropped.discard()
            #expect(try store.size(of: .parity(id, group: 1, shard: 0)) == nil)
            #expect(try store.keys().filter { $0.upload == id }.count == 1)
        }
    }

    @Test(arguments: BlobStoreKind.allCases) func anAppendCutsOffWhatWasStoredPastItsOffset(_ kind: BlobStoreKind)
        async throws
    {
        let store = try await kind.make()
        let id = self.id
        try await MotoTestServer.onThread {
            let first = try store.append(to: .stream(id), at: 0)
            try first.write(Array("0123456789".utf8))
            try first.commit()
            #expect(try store.size(of: .stream(id)) == 10)
            let second = try store.append(to: .stream(id), at: 5)
            try second.write(Array("abc".utf8))
            try second.commit()
            #expect(try store.size(of: .stream(id)) == 8)
            #expect(try Self.read(store, .stream(id), at: 0, count: 100) == Array("01234abc".utf8))
            // A refused append leaves the stored prefix as it was.
            let refused = try store.append(to: .stream(id), at: 8)
            try refused.write(Array("zzzz".utf8))
            refused.discard()
            #expect(try Self.read(store, .stream(id), at: 0, count: 100) == Array("01234abc".utf8))
            // An append past the stored end is refused.
            #expect(throws: ReceiverError.self) { _ = try store.append(to: .stream(id), at: 9) }
            // A cut with no bytes (recovery's) shortens the stream.
            try store.append(to: .stream(id), at: 3).commit()
            #expect(try Self.read(store, .stream(id), at: 0, count: 100) == Array("012".utf8))
        }
    }

    @Test(arguments: BlobStoreKind.allCases) func regionsPlacedOutOfOrderReadBackAcrossTheirBoundaries(
        _ kind: BlobStoreKind
    ) async throws {
        let store = try await kind.make()
        let id = self.id
        let content = EngineFixture.bytes(300_000, seed: 4)
        try await MotoTestServer.onThread {
            try store.reserve(.stream(id), size: 300_000)
            for start in [200_000, 0, 100_000] {
                let writer = try store.place(into: .stream(id), at: Int64(start))
                try writer.write(Array(content[start..<(start + 100_000)]))
                try writer.commit()
            }
            #expect(try store.size(of: .stream(id)) == 300_000)
            #expect(try Self.read(store, .stream(id), at: 50_000, count: 200_000) == Array(content[50_000..<250_000]))
            #expect(try Self.read(store, .stream(id), at: 250_000, count: 100_000) == Array(content[250_000...]))
            #expect(try Self.read(store, .stream(id), at: 300_000, count: 10).isEmpty)
        }
    }

    @Test(arguments: BlobStoreKind.allCases) func aPromotedStreamIsAnObjectByteForByte(_ kind: BlobStoreKind)
        async throws
    {
        // Small pieces (buffered into parts) around one of 6 MiB (copied server side): 3 + 6 + 3 MiB.
        let store = try await kind.make()
        let id = self.id
        let sizes = [1 << 20, 1 << 20, 1 << 20, 6 << 20, 1 << 20, 1 << 20, 1 << 20]
        let content = EngineFixture.bytes(sizes.reduce(0, +), seed: 5)
        try await MotoTestServer.onThread {
            var offset = 0
            for size in sizes {
                let writer = try store.place(into: .stream(id), at: Int64(offset))
                try writer.write(Array(content[offset..<(offset + size)]))
                try writer.commit()
                offset += size
            }
            try store.promote(.stream(id), to: .object(id))
            #expect(try store.size(of: .object(id)) == Int64(content.count))
            var whole = SHA256()
            try unsafe store.forEachPiece(of: .object(id), pieceSize: 3 << 20) { piece in unsafe whole.update(piece) }
            #expect(whole.finalize() == SHA256.hash(content))
            #expect(
                try Self.read(store, .object(id), at: 3 << 20, count: 10)
                    == Array(content[(3 << 20)..<((3 << 20) + 10)]))
        }
        if kind == .s3, let s3 = store as? S3BlobStore {
            let seen = try MotoTestServer.shared.get().object(bucket: s3.client.bucket, key: "fleet/a/objects/\(id)")
            #expect(seen.size == content.count)
            #expect(seen.sha256 == SHA256.hash(content).hex)
        }
    }

    @Test(arguments: BlobStoreKind.allCases) func anAliasAndDeletesKeepOrDropTheRightBlobs(_ kind: BlobStoreKind)
        async throws
    {
        let store = try await kind.make()
        let id = self.id
        let other = Self.newID()
        let bytes = EngineFixture.bytes(9000, seed: 6)
        try await MotoTestServer.onThread {
            let append = try store.append(to: .stream(id), at: 0)
            try append.write(bytes)
            try append.commit()
            try store.promote(.stream(id), to: .object(id))
            try store.alias(.object(id), as: .object(other))
            #expect(try store.readAll(.object(other), expectedLength: 9000) == bytes)
            let shard = try store.stage(.parity(id, group: 0, shard: 0))
            try shard.write(bytes)
            try shard.commit()
            try store.deleteWorkingBlobs(of: id)
            #expect(try store.size(of: .stream(id)) == nil)
            #expect(try store.size(of: .parity(id, group: 0, shard: 0)) == nil)
            #expect(try store.size(of: .object(id)) == 9000)
            try store.delete(.object(id))
            try store.delete(.object(id))  // a missing blob is not an error
            #expect(try store.size(of: .object(id)) == nil)
            #expect(try store.readAll(.object(other), expectedLength: 9000) == bytes)
            #expect(Set(try store.keys()).isSuperset(of: [.object(other)]))
            #expect(!(try store.keys()).contains(.object(id)))
        }
    }

    @Test(arguments: BlobStoreKind.allCases) func aDiscardedWriterOfARegionLeavesTheCommittedOneIntact(
        _ kind: BlobStoreKind
    ) async throws {
        let store = try await kind.make()
        let id = self.id
        let kept = EngineFixture.bytes(50_000, seed: 7)
        try await MotoTestServer.onThread {
            let winner = try store.place(into: .stream(id), at: 0)
            let loser = try store.place(into: .stream(id), at: 0)
            // The directory store writes in place: one writer of a region at a time (the engine's claim), so its
            // loser is done before the winner writes; S3 pieces of two writers never share a name, so they may
            // overlap in time and commit.
            if kind == .directory {
                try loser.write(EngineFixture.bytes(50_000, seed: 8))
                loser.discard()
            }
            try winner.write(kept)
            try winner.commit()
            if kind == .s3 {
                try loser.write(EngineFixture.bytes(50_000, seed: 8))
                loser.discard()
                let abandoned = try store.place(into: .stream(id), at: 0)
                try abandoned.write(EngineFixture.bytes(50_000, seed: 9))
                abandoned.abandon()
            }
            #expect(try Self.read(store, .stream(id), at: 0, count: 50_000) == kept)
        }
    }

    @Test func theS3StoreDiscardsNoStagingAtStartAndListsItsBlobs() async throws {
        let store = try await BlobStoreKind.s3.make()
        let id = self.id
        try await MotoTestServer.onThread {
            let live = try store.append(to: .stream(id), at: 0)
            try live.write(EngineFixture.bytes(1000))
            try live.durable()  // another receiver's append in flight: durable, not yet committed
            let staged = try store.stage(.parity(id, group: 2, shard: 3))
            try staged.write(EngineFixture.bytes(10))
            try staged.commit()
            #expect(try store.discardStaging() == 0)
            #expect(try store.size(of: .stream(id)) == 1000)
            #expect(Set(try store.keys()) == [.stream(id), .parity(id, group: 2, shard: 3)])
            try live.commit()
        }
    }
}
