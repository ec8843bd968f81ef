import AetherIO
import AetherIntegrity
import AetherReceiver
import Foundation
import Testing

/// What one spot check makes the receiver read (issue 24, 6(b)): measured through a counting store against a complete
/// object 16 times the bound, a challenge reads exactly its ranges (at most `challenge-bytes`), never the object.
@Suite struct ChallengeReadBoundTests {
    static let chunkSize = 1 << 20
    static let chunks = 32

    @Test func aChallengeOnACompleteObjectReadsItsRangesNotTheObject() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-challenge-bound-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var limits = ReceiverLimits(minimumChunkSize: 16 * 1024)
        limits.maximumChallengeBytes = 2 << 20
        let store = try CountingBlobStore(root: FilePath(directory))
        let engine = UploadEngine(
            blobs: store, catalog: try SQLiteUploadCatalog(path: FilePath(directory + "/catalog.sqlite3")),
            limits: limits, clock: ManualClock())
        let owner = ClientIdentity("alice")
        // 32 distinct chunks of one random block (a 32 MiB SplitMix stream is slow in a debug build).
        let block = EngineFixture.bytes(Self.chunkSize, seed: 77)
        let chunks = (0..<Self.chunks).map { index in [UInt8(index)] + block.dropFirst() }
        let hashes = chunks.map { SHA256.hash($0) }
        var link = ChunkCommitmentChain.genesis(sessionID: "bound")
        let links = hashes.map { hash in
            link = ChunkCommitmentChain.link(chunkHash: hash, previous: link)
            return link
        }
        let root = try MerkleProofBuilder(chunkHashes: hashes).root
        var whole = SHA256()
        for chunk in chunks { whole.update(chunk) }
        let record = try engine.create(
            NewUpload(
                uploadProtocol: .native, size: Int64(Self.chunkSize * Self.chunks), chunkSize: Self.chunkSize,
                chunks: Self.chunks, chainSessionID: "bound"),
            owner: owner)
        for index in 0..<Self.chunks {
            let descriptor = ChunkDescriptor(
                length: Self.chunkSize, crc32c: CRC32C.checksum(chunks[index]), sha256: hashes[index],
                link: links[index])
            let sink = try engine.openChunk(record.id, index: index, descriptor: descriptor, owner: owner)
            try sink.write(chunks[index])
            #expect(try sink.finish() == .stored)
        }
        _ = try engine.complete(
            record.id, owner: owner,
            claim: CompletionClaim(
                chainHead: link, fileSHA256: whole.finalize(), merkleRoot: root, chunkHashes: hashes))
        let objectSize = Int64(Self.chunkSize * Self.chunks)
        #expect(objectSize == 16 * limits.maximumChallengeBytes)

        // Two whole chunks: exactly the bound, read once; the proofs come from the recorded hashes.
        let nonce = EngineFixture.bytes(32, seed: 78)
        let items = try [3, 31].map { try ByzantineChallenge.Item(index: $0, offset: 0, length: Int64(Self.chunkSize)) }
        let challenge = try ByzantineChallenge(uploadID: Array(record.id.rawValue.utf8), items: items, nonce: nonce)
        let before = store.bytesRead
        let answers = try engine.challenge(record.id, items: items, nonce: nonce, owner: owner)
        let read = store.bytesRead - before
        print("one challenge of 2 chunks on a complete \(objectSize)-byte object read \(read) bytes")
        #expect(read == limits.maximumChallengeBytes)
        for (answer, item) in zip(answers, items) {
            #expect(answer.mac == (try challenge.response(for: item, bytes: chunks[item.index])))
            let proof = try #require(answer.proof)
            #expect(proof.verify(chunkHash: hashes[item.index], root: root, leafCount: UInt64(Self.chunks)))
        }

        // A range inside a chunk: only its bytes.
        let range = try ByzantineChallenge.Item(index: 9, offset: 1000, length: 4096)
        let beforeRange = store.bytesRead
        _ = try engine.challenge(record.id, items: [range], nonce: nonce, owner: owner)
        #expect(store.bytesRead - beforeRange == 4096)

        // One byte over the bound: refused before anything is read.
        let overItems =
            try [1, 2].map { try ByzantineChallenge.Item(index: $0, offset: 0, length: Int64(Self.chunkSize)) }
            + [try ByzantineChallenge.Item(index: 5, offset: 0, length: 1)]
        let beforeOver = store.bytesRead
        #expect(
            receiverError { _ = try engine.challenge(record.id, items: overItems, nonce: nonce, owner: owner) }?.code
                == .challengeTooLarge)
        #expect(store.bytesRead == beforeOver)
    }
}
