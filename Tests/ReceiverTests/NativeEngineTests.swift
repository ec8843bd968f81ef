import AetherCoding
import AetherIO
import AetherIntegrity
import AetherReceiver
import Dispatch
import Synchronization
import Testing

@Suite struct NativeEngineTests {
    /// The whole-object hash is fed after each commit, outside the upload's gate: chunks committed from eight
    /// threads at once, in shuffled order, still complete with the file's SHA-256 (a chunk fed before it was stored,
    /// fed twice or skipped would fail the completion's comparison with `digestMismatch`).
    @Test(arguments: [UInt64(1), 2, 3]) func chunksCommittedFromManyThreadsFeedTheWholeHashOnceEach(_ seed: UInt64)
        throws
    {
        let fixture = try EngineFixture()
        let content = fixture.native(160 * EngineFixture.chunkSize + 777, seed: seed)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        var generator = SplitMix(state: seed)
        let order = Array(0..<content.chunks.count).shuffled(using: &generator)
        let failures = Mutex<[String]>([])
        let engine = fixture.engine
        let owner = fixture.alice
        let chunks = content.chunks
        let descriptors = chunks.indices.map { content.descriptor($0) }
        DispatchQueue.concurrentPerform(iterations: 8) { lane in
            for index in stride(from: lane, to: order.count, by: 8) {
                do {
                    let sink = try engine.openChunk(
                        record.id, index: order[index], descriptor: descriptors[order[index]], owner: owner)
                    try sink.write(chunks[order[index]])
                    _ = try sink.finish()
                } catch {
                    failures.withLock { $0.append("chunk \(order[index]): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let receipt = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test(arguments: CatalogueKind.allCases) func chunksArriveOutOfOrderAndCompleteWithTheReceiversOwnValues(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(5 * EngineFixture.chunkSize + 1000)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        #expect(record.chunks == 6)
        for index in [3, 0, 5, 1] { #expect(try fixture.send(content, index, to: record.id) == .stored) }
        var status = try fixture.engine.status(record.id, owner: fixture.alice)
        #expect(status.received == [true, true, false, true, false, true])
        #expect(status.prefixChunks == 2)
        #expect(status.offset == Int64(2 * EngineFixture.chunkSize))
        #expect(status.record.chainVerifiedThrough == 1)
        #expect(UploadStatus.bitmap(status.received) == [0b0010_1011])

        let early = receiverError {
            _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        }
        #expect(early?.code == .incomplete)
        #expect(early?.chunk == 2)

        for index in [4, 2] { try fixture.send(content, index, to: record.id) }
        status = try fixture.engine.status(record.id, owner: fixture.alice)
        #expect(status.record.chainVerifiedThrough == 5)
        let receipt = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
        #expect(receipt.merkleRoot == (try MerkleProofBuilder(chunkHashes: content.hashes).root))
        #expect(receipt.chainHead == content.links.last)
        #expect(receipt.chunks == 6)
        #expect(receipt.size == Int64(content.bytes.count))
        #expect(receipt.cid == CIDv1(digest: SHA256.hash(content.bytes)).string)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
        // Idempotent.
        #expect(try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim) == receipt)
        // A chunk sent again to the complete upload is told so (409 already-complete), and changes nothing.
        let late = receiverError { _ = try fixture.send(content, 4, to: record.id) }
        #expect(late?.code == .alreadyComplete)
        #expect(late?.code.status == 409)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
        // Working chunks are gone once the object is stored.
        #expect(try fixture.blobStore.keys() == [.object(record.id)])
    }

    @Test(arguments: CatalogueKind.allCases) func anEmptyObjectIsOneEmptyChunk(_ catalogue: CatalogueKind) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(0)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try fixture.send(content, 0, to: record.id)
        let receipt = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(receipt.size == 0)
        #expect(try fixture.objectBytes(record.id).isEmpty)
    }

    @Test(arguments: CatalogueKind.allCases) func aRetryIsAlreadyStoredAndOtherBytesAreADuplicateThatChangesNothing(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(2 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        #expect(try fixture.send(content, 0, to: record.id) == .stored)
        let before = try fixture.storeSnapshot()
        #expect(try fixture.send(content, 0, to: record.id) == .alreadyStored)
        #expect(try fixture.storeSnapshot() == before)

        let other = fixture.native(2 * EngineFixture.chunkSize, seed: 99)
        let duplicate = receiverError { try fixture.send(other, 0, to: record.id) }
        #expect(duplicate?.code == .duplicateChunk)
        #expect(duplicate?.chunk == 0)
        #expect(try fixture.storeSnapshot() == before)
    }

    @Test(arguments: CatalogueKind.allCases, ["sha256", "crc32c", "shortBody", "longBody", "declaredLength"])
    func aMismatchedChunkStoresNothing(_ catalogue: CatalogueKind, _ fault: String) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(2 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try fixture.send(content, 1, to: record.id)
        let before = try fixture.storeSnapshot()
        var descriptor = content.descriptor(0)
        var body = content.chunks[0]
        let expected: ReceiverError.Code
        switch fault {
        case "sha256":
            descriptor.sha256 = SHA256.hash([1])
            expected = .digestMismatch
        case "crc32c":
            descriptor.crc32c ^= 1
            expected = .digestMismatch
        case "shortBody":
            body.removeLast()
            expected = .lengthMismatch
        case "longBody":
            body.append(0)
            expected = .tooLarge
        default:
            descriptor.length -= 1
            expected = .lengthMismatch
        }
        let error = receiverError {
            let sink = try fixture.engine.openChunk(record.id, index: 0, descriptor: descriptor, owner: fixture.alice)
            try sink.write(body)
            _ = try sink.finish()
        }
        #expect(error?.code == expected)
        #expect(try fixture.storeSnapshot() == before)
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).received == [false, true])
    }

    @Test(arguments: CatalogueKind.allCases) func anIndexOutOfRangeIsMalformed(_ catalogue: CatalogueKind) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in [-1, 1, Int.max] {
            let error = receiverError {
                _ = try fixture.engine.openChunk(
                    record.id, index: index, descriptor: content.descriptor(0), owner: fixture.alice)
            }
            #expect(error?.code == .malformedRequest)
        }
    }

    @Test(arguments: CatalogueKind.allCases) func unknownAndInvalidIdsAndOtherOwnersAreRefused(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        for text in [
            "", "../../etc/passwd", "AAAAAAAAAAAAAAAAAAAAAAAAAA", "aaaaaaaaaaaaaaaaaaaaaaaaab",
            "a/aaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            #expect(receiverError { _ = try UploadID(text) }?.code == .notFound)
        }
        let unknown = try UploadID("aaaaaaaaaaaaaaaaaaaaaaaaaa")
        #expect(receiverError { _ = try fixture.engine.status(unknown, owner: fixture.alice) }?.code == .notFound)
        let record = try fixture.engine.create(NewUpload(uploadProtocol: .tus, size: 4), owner: fixture.alice)
        #expect(try UploadID(record.id.rawValue) == record.id)
        #expect(receiverError { _ = try fixture.engine.status(record.id, owner: fixture.mallory) }?.code == .notFound)
        #expect(
            receiverError { _ = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.mallory) }?.code
                == .notFound)
        #expect(receiverError { try fixture.engine.cancel(record.id, owner: fixture.mallory) }?.code == .notFound)
    }

    @Test(arguments: CatalogueKind.allCases) func creationChecksLayoutAndLimits(_ catalogue: CatalogueKind) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let size = Int64(3 * EngineFixture.chunkSize)
        func create(_ change: (inout NewUpload) -> Void) -> ReceiverError.Code? {
            var request = NewUpload(
                uploadProtocol: .native, size: size, chunkSize: EngineFixture.chunkSize, chunks: 3,
                chainSessionID: "s")
            change(&request)
            return receiverError { _ = try fixture.engine.create(request, owner: fixture.alice) }?.code
        }
        #expect(create { _ in } == nil)
        #expect(create { $0.chunks = 4 } == .malformedRequest)
        #expect(create { $0.chunkSize = EngineFixture.chunkSize + 1 } == .malformedRequest)
        #expect(create { $0.chainSessionID = "" } == .malformedRequest)
        #expect(create { $0.contentID = "aci:1:sha256:XYZ" } == .malformedRequest)
        #expect(create { $0.parity = ParityLayout(data: 200, parity: 100) } == .malformedRequest)
        #expect(create { $0.size = fixture.limits.maximumObjectSize + 1 } == .tooLarge)
        #expect(create { $0.size = -1 } == .malformedRequest)
        #expect(create { $0.metadata = ["bad key": [1]] } == .malformedRequest)
        #expect(create { $0.metadata = ["k": [UInt8](repeating: 0, count: 20_000)] } == .tooLarge)
        // One open upload was created above; fill the per-client allowance.
        for _ in 1..<fixture.limits.maximumOpenUploadsPerClient { #expect(create { _ in } == nil) }
        #expect(create { _ in } == .tooManyRequests)
    }

    @Test(arguments: CatalogueKind.allCases) func aBrokenLinkFailsTheUploadNamingTheChunk(_ catalogue: CatalogueKind)
        throws
    {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(3 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try fixture.send(content, 0, to: record.id)
        // Chunk 2 arrives first with a wrong link: it cannot be checked until chunk 1 is stored.
        var descriptor = content.descriptor(2)
        descriptor.link = SHA256.hash([7])
        let sink = try fixture.engine.openChunk(record.id, index: 2, descriptor: descriptor, owner: fixture.alice)
        try sink.write(content.chunks[2])
        #expect(try sink.finish() == .stored)
        let broken = receiverError { try fixture.send(content, 1, to: record.id) }
        #expect(broken?.code == .chainBroken)
        #expect(broken?.chunk == 2)
        let status = try fixture.engine.status(record.id, owner: fixture.alice)
        #expect(status.record.state == .failed)
        #expect(status.record.chainVerifiedThrough == 1)
        #expect(receiverError { try fixture.send(content, 2, to: record.id) }?.code == .chainBroken)
    }

    @Test(arguments: CatalogueKind.allCases) func aMerkleMismatchNamesTheFirstDifferingChunkAndLeavesTheUploadOpen(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(4 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in 0..<4 { try fixture.send(content, index, to: record.id) }
        var claim = try content.claim
        var hashes = content.hashes
        hashes[2] = SHA256.hash([2])
        hashes[3] = SHA256.hash([3])
        claim.merkleRoot = try MerkleProofBuilder(chunkHashes: hashes).root
        claim.chunkHashes = hashes
        let error = receiverError { _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: claim) }
        #expect(error?.code == .merkleMismatch)
        #expect(error?.chunk == 2)
        var wrongHead = try content.claim
        wrongHead.chainHead = SHA256.hash([0])
        #expect(
            receiverError { _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: wrongHead) }?
                .code == .chainBroken)
        var wrongFile = try content.claim
        wrongFile.fileSHA256 = SHA256.hash([0])
        #expect(
            receiverError { _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: wrongFile) }?
                .code == .digestMismatch)
        #expect(!fixture.objectExists(record.id))
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).record.state == .open)
        #expect(try fixture.blobStore.discardStaging() == 0)
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test(arguments: CatalogueKind.allCases, [[1], [0, 3], [4]])
    func lostChunksAreRebuiltFromParity(_ catalogue: CatalogueKind, _ lost: [Int]) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        // Two groups of 3: chunks 0-2 and 3-4 (the last group is short and its last chunk too).
        let content = fixture.native(4 * EngineFixture.chunkSize + 5000)
        var request = content.newUpload
        request.parity = ParityLayout(data: 3, parity: 2)
        let record = try fixture.engine.create(request, owner: fixture.alice)
        let code = try ReedSolomonCode(dataShards: 3, parityShards: 2)
        let padded = content.chunks.map { $0 + [UInt8](repeating: 0, count: EngineFixture.chunkSize - $0.count) }
        let zero = [UInt8](repeating: 0, count: EngineFixture.chunkSize)
        let groups = [Array(padded[0..<3]), [padded[3], padded[4], zero]]
        for index in 0..<5 where !lost.contains(index) { try fixture.send(content, index, to: record.id) }
        for (group, data) in groups.enumerated() {
            for (shard, parity) in try code.encode(data).enumerated() {
                let descriptor = ChunkDescriptor(
                    length: parity.count, crc32c: CRC32C.checksum(parity), sha256: SHA256.hash(parity))
                let sink = try fixture.engine.openParity(
                    record.id, group: group, shard: shard, descriptor: descriptor, owner: fixture.alice)
                try sink.write(parity)
                #expect(try sink.finish() == .stored)
            }
        }
        let status = try fixture.engine.status(record.id, owner: fixture.alice)
        #expect(status.received == [Bool](repeating: true, count: 5))
        #expect(status.parityReceived == [Bool](repeating: true, count: 4))
        let receipt = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
        #expect(try fixture.objectBytes(record.id) == content.bytes)
        let audit = try fixture.engine.catalog.auditLog(record.id).map(\.event)
        for index in lost { #expect(audit.contains("rebuilt chunk \(index)")) }
    }

    @Test(arguments: CatalogueKind.allCases) func challengesAreAnsweredWithMACsOfStoredBytesAndProofsOfRecordedHashes(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(5 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in 0..<4 { try fixture.send(content, index, to: record.id) }
        let nonce = EngineFixture.bytes(32, seed: 5)
        var items = try content.items([1, 4])
        var answers = try fixture.engine.challenge(record.id, items: items, nonce: nonce, owner: fixture.alice)
        #expect(answers[0].sha256 == content.hashes[1])
        #expect(answers[0].mac == (try content.mac(items[0], nonce: nonce, id: record.id)))
        #expect(answers[0].proof == nil)
        #expect(answers[1].sha256 == nil && answers[1].mac == nil)
        // The MAC depends on the nonce: another nonce, another answer.
        let other = try fixture.engine.challenge(
            record.id, items: items, nonce: EngineFixture.bytes(32, seed: 6), owner: fixture.alice)
        #expect(other[0].mac != answers[0].mac)
        try fixture.send(content, 4, to: record.id)
        let root = try MerkleProofBuilder(chunkHashes: content.hashes).root
        items = try content.items([0, 2, 4])
        answers = try fixture.engine.challenge(record.id, items: items, nonce: nonce, owner: fixture.alice)
        for (answer, item) in zip(answers, items) {
            let proof = try #require(answer.proof)
            #expect(proof.verify(chunkHash: content.hashes[answer.index], root: root, leafCount: 5))
            #expect(answer.mac == (try content.mac(item, nonce: nonce, id: record.id)))
        }
        // A stored chunk damaged on disk is caught by its MAC (read from the bytes), while its recorded hash (a
        // claim, kept in the catalogue) still looks right.
        var damaged = content.chunks[2]
        damaged[0] ^= 0xff
        let writer = try fixture.blobStore.place(into: .stream(record.id), at: Int64(2 * EngineFixture.chunkSize))
        try writer.write(damaged)
        try writer.commit()
        let two = try content.items([2])
        let bad = try fixture.engine.challenge(record.id, items: two, nonce: nonce, owner: fixture.alice)
        #expect(bad[0].sha256 == content.hashes[2])
        #expect(bad[0].mac != (try content.mac(two[0], nonce: nonce, id: record.id)))
        #expect(
            receiverError {
                // One byte past the chunk's end.
                let past = try ByzantineChallenge.Item(index: 0, offset: 1, length: Int64(EngineFixture.chunkSize))
                _ = try fixture.engine.challenge(record.id, items: [past], nonce: nonce, owner: fixture.alice)
            }?.code == .malformedRequest)
        #expect(
            receiverError {
                _ = try fixture.engine.challenge(
                    record.id, items: [try ByzantineChallenge.Item(index: 5, offset: 0, length: 1)], nonce: nonce,
                    owner: fixture.alice)
            }?.code == .malformedRequest)
        #expect(
            receiverError {
                _ = try fixture.engine.challenge(record.id, items: items, nonce: [1, 2], owner: fixture.alice)
            }?.code == .malformedRequest)
    }
}

/// SplitMix64: a seeded generator, so that each case's shuffled order is the same on every run.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
