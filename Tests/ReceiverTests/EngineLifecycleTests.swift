import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherSecurity
import Foundation
import Testing

@Suite struct EngineLifecycleTests {
    /// Stores `content` as a completed native upload and returns a second upload of the same content id.
    private func dedupUpload(_ fixture: EngineFixture, _ content: EngineFixture.NativeContent) throws -> (
        UploadID, UploadStatus
    ) {
        let first = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in content.chunks.indices { try fixture.send(content, index, to: first.id) }
        _ = try fixture.engine.complete(first.id, owner: fixture.alice, claim: content.claim)
        var request = content.newUpload
        request.contentID = ACI(digest: SHA256.hash(content.bytes)).description
        let second = try fixture.engine.create(request, owner: fixture.alice)
        return (second.id, try fixture.engine.status(second.id, owner: fixture.alice))
    }

    private func prover(_ bytes: [UInt8], chunkSize: Int) throws -> ProofOfPossessionProver {
        let source = InMemoryPossessionSource(bytes)
        let hashes = try ProofOfPossessionProver.chunkHashes(of: source, chunkSize: UInt32(chunkSize))
        return try ProofOfPossessionProver(source: source, chunkSize: UInt32(chunkSize), chunkHashes: hashes)
    }

    /// A passed proof completes the upload without a chunk. `elsewhere`: a fleet, the challenge issued by one
    /// receiver and its answer reaching another (the same catalogue and store under a fresh engine, which holds
    /// nothing of the first one's memory).
    @Test(arguments: CatalogueKind.allCases, [false, true]) func aPassedPossessionProofCompletesWithoutAnyChunk(
        _ catalogue: CatalogueKind, elsewhere: Bool
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(3 * EngineFixture.chunkSize + 10)
        let (id, status) = try dedupUpload(fixture, content)
        let challenge = try PossessionChallenge(serialized: try #require(status.possessionChallenge))
        let response = try prover(content.bytes, chunkSize: EngineFixture.chunkSize).respond(to: challenge)
        if elsewhere { try fixture.restart() }
        let receipt = try fixture.engine.answerPossession(id, response: response.serialized, owner: fixture.alice)
        #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
        #expect(receipt.merkleRoot == (try content.claim).merkleRoot)
        #expect(receipt.chainHead == (try content.claim).chainHead)
        #expect(try fixture.objectBytes(id) == content.bytes)
        #expect(try fixture.engine.status(id, owner: fixture.alice).isComplete)
    }

    @Test(arguments: CatalogueKind.allCases) func aWrongExpiredOrReplayedPossessionProofFailsAndTheUploadStaysOpen(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(2 * EngineFixture.chunkSize)
        let (id, status) = try dedupUpload(fixture, content)
        let challenge = try PossessionChallenge(serialized: try #require(status.possessionChallenge))
        // Someone holding other bytes of the same length.
        var other = content.bytes
        other[100] ^= 1
        let forged = try prover(other, chunkSize: EngineFixture.chunkSize).respond(to: challenge)
        #expect(
            receiverError {
                _ = try fixture.engine.answerPossession(id, response: forged.serialized, owner: fixture.alice)
            }?
            .code == .possessionFailed)
        // The challenge was used up by the failed answer: the right answer to it fails too.
        let honest = try prover(content.bytes, chunkSize: EngineFixture.chunkSize).respond(to: challenge)
        #expect(
            receiverError {
                _ = try fixture.engine.answerPossession(id, response: honest.serialized, owner: fixture.alice)
            }?
            .code == .possessionFailed)
        // A fresh challenge answered after 15 s fails.
        let late = try PossessionChallenge(
            serialized: try #require(try fixture.engine.status(id, owner: fixture.alice).possessionChallenge))
        let lateAnswer = try prover(content.bytes, chunkSize: EngineFixture.chunkSize).respond(to: late)
        fixture.clock.advance(by: .seconds(16))
        #expect(
            receiverError {
                _ = try fixture.engine.answerPossession(id, response: lateAnswer.serialized, owner: fixture.alice)
            }?
            .code == .possessionFailed)
        #expect(
            receiverError { _ = try fixture.engine.answerPossession(id, response: [1, 2, 3], owner: fixture.alice) }?
                .code == .possessionFailed)
        #expect(try fixture.engine.status(id, owner: fixture.alice).record.state == .open)
        #expect(!fixture.objectExists(id))
    }

    @Test(arguments: CatalogueKind.allCases) func idleUploadsExpireOnTheManualClock(_ catalogue: CatalogueKind) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let idle = try fixture.engine.create(NewUpload(uploadProtocol: .tus, size: 10), owner: fixture.alice)
        try fixture.append([1, 2, 3], to: idle.id, at: 0)
        fixture.clock.advance(by: .seconds(fixture.limits.expirySeconds - 10))
        let busy = try fixture.engine.create(NewUpload(uploadProtocol: .tus, size: 10), owner: fixture.alice)
        #expect(try fixture.engine.expire().isEmpty)
        let status = try fixture.engine.status(idle.id, owner: fixture.alice)
        #expect(status.expiresAt == ManualClock.defaultWall.components.seconds + fixture.limits.expirySeconds)
        fixture.clock.advance(by: .seconds(10))
        #expect(try fixture.engine.expire() == [idle.id])
        #expect(receiverError { _ = try fixture.engine.status(idle.id, owner: fixture.alice) }?.code == .expired)
        #expect(
            receiverError { _ = try fixture.engine.openAppend(idle.id, offset: 3, owner: fixture.alice) }?.code
                == .expired)
        #expect(try fixture.blobStore.size(of: .stream(idle.id)) == nil)
        #expect(try fixture.engine.status(busy.id, owner: fixture.alice).record.state == .open)
    }

    @Test(arguments: CatalogueKind.allCases) func aCancelledUploadLosesItsBytesAndAnswersExpired(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(2 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try fixture.send(content, 0, to: record.id)
        try fixture.engine.cancel(record.id, owner: fixture.alice)
        #expect(try fixture.blobStore.keys().isEmpty)
        #expect(receiverError { try fixture.send(content, 1, to: record.id) }?.code == .expired)
        #expect(receiverError { _ = try fixture.engine.status(record.id, owner: fixture.alice) }?.code == .expired)
        #expect(receiverError { try fixture.engine.cancel(record.id, owner: fixture.alice) }?.code == .expired)
    }

    @Test(arguments: CatalogueKind.allCases) func aCancelledCompleteUploadLosesItsObjectAndItsDedupEntry(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(EngineFixture.chunkSize)
        let (second, status) = try dedupUpload(fixture, content)
        let challenge = try PossessionChallenge(serialized: try #require(status.possessionChallenge))
        let response = try prover(content.bytes, chunkSize: EngineFixture.chunkSize).respond(to: challenge)
        _ = try fixture.engine.answerPossession(second, response: response.serialized, owner: fixture.alice)
        let contentID = ACI(digest: SHA256.hash(content.bytes)).description
        let first = try #require(
            try fixture.engine.catalog.object(
                contentID: contentID, chunkSize: EngineFixture.chunkSize, owner: fixture.alice)
        ).upload
        try fixture.engine.cancel(first, owner: fixture.alice)
        #expect(!fixture.objectExists(first))
        #expect(
            try fixture.engine.catalog.object(contentID: contentID, chunkSize: EngineFixture.chunkSize, owner: nil)
                == nil)
        // The deduplicated upload keeps its own copy.
        #expect(try fixture.objectBytes(second) == content.bytes)
        var request = content.newUpload
        request.contentID = contentID
        let third = try fixture.engine.create(request, owner: fixture.alice)
        #expect(try fixture.engine.status(third.id, owner: fixture.alice).possessionChallenge == nil)
    }

    @Test(arguments: CatalogueKind.allCases) func tusPartialsAreConcatenatedInOrder(_ catalogue: CatalogueKind) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        var partials: [UploadID] = []
        for part in [[1, 2, 3], [4, 5], [6]] as [[UInt8]] {
            let record = try fixture.engine.create(
                NewUpload(uploadProtocol: .tus, size: Int64(part.count), concatenation: .partial), owner: fixture.alice)
            try fixture.append(part, to: record.id, at: 0)
            partials.append(record.id)
        }
        let open = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, size: 5, concatenation: .partial), owner: fixture.alice)
        #expect(
            receiverError {
                _ = try fixture.engine.create(
                    NewUpload(uploadProtocol: .tus, concatenation: .final([partials[0], open.id])), owner: fixture.alice
                )
            }?.code == .incomplete)
        let final = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, concatenation: .final(partials)), owner: fixture.alice)
        #expect(final.state == .complete)
        #expect(final.size == 6)
        #expect(try fixture.objectBytes(final.id) == [1, 2, 3, 4, 5, 6])
        #expect(
            receiverError { _ = try fixture.engine.openAppend(final.id, offset: 6, owner: fixture.alice) }?.code
                == .forbidden)
    }

    @Test(arguments: CatalogueKind.allCases) func concurrentPutsOfOneIndexSerialize(_ catalogue: CatalogueKind)
        async throws
    {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        let engine = fixture.engine
        let owner = fixture.alice
        let outcomes = try await withThrowingTaskGroup(of: ChunkOutcome.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let sink = try engine.openChunk(
                        record.id, index: 0, descriptor: content.descriptor(0), owner: owner)
                    try sink.write(content.chunks[0])
                    return try sink.finish()
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.count { $0 == .stored } == 1)
        #expect(outcomes.count { $0 == .alreadyStored } == 7)
        #expect(try fixture.engine.catalog.chunkReceipts(record.id).count == 1)
        #expect(try fixture.blobStore.discardStaging() == 0)
    }
}
