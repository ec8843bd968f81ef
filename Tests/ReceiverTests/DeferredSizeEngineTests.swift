import AetherIO
import AetherIntegrity
import AetherReceiver
import Testing

/// Native uploads created without a size (`"size":null`, `aether upload --follow`): chunks while the size is
/// unknown, the size fixed by the completion, and every refusal that keeps a mix from being assembled.
@Suite struct DeferredSizeEngineTests {
    static func deferred(_ content: EngineFixture.NativeContent) -> NewUpload {
        NewUpload(uploadProtocol: .native, chunkSize: content.chunkSize, chainSessionID: content.session)
    }

    func claim(_ content: EngineFixture.NativeContent, size: Int64?) throws -> CompletionClaim {
        var claim = try content.claim
        claim.size = size
        return claim
    }

    @Test(arguments: CatalogueKind.allCases) func aGrowingUploadTakesChunksAndTheCompletionFixesTheSize(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(3 * EngineFixture.chunkSize + 500)
        let record = try fixture.engine.create(Self.deferred(content), owner: fixture.alice)
        #expect(record.size == nil)
        #expect(record.chunks == 0)
        for index in [0, 2, 1] { #expect(try fixture.send(content, index, to: record.id) == .stored) }
        var status = try fixture.engine.status(record.id, owner: fixture.alice)
        #expect(status.received == [true, true, true])
        #expect(status.record.chainVerifiedThrough == 2)
        // The short last chunk is taken while the size is unknown.
        try fixture.send(content, 3, to: record.id)
        status = try fixture.engine.status(record.id, owner: fixture.alice)
        #expect(status.received.count == 4)
        // No spot check while the size is unknown (the last chunk's length is not known): refused, whichever chunk.
        for index in [0, 3] {
            let item = try ByzantineChallenge.Item(index: index, offset: 0, length: 1)
            let refused = receiverError {
                _ = try fixture.engine.challenge(
                    record.id, items: [item], nonce: EngineFixture.bytes(32, seed: 3), owner: fixture.alice)
            }
            #expect(refused?.code == .malformedRequest)
        }
        let missingSize = receiverError {
            _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        }
        #expect(missingSize?.code == .malformedRequest)
        let receipt = try fixture.engine.complete(
            record.id, owner: fixture.alice, claim: claim(content, size: Int64(content.bytes.count)))
        #expect(receipt.size == Int64(content.bytes.count))
        #expect(receipt.chunks == 4)
        #expect(receipt.chainHead == content.links.last)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
        status = try fixture.engine.status(record.id, owner: fixture.alice)
        #expect(status.record.size == Int64(content.bytes.count))
        #expect(status.record.chunks == 4)
    }

    @Test(arguments: CatalogueKind.allCases) func aSizeThatDisagreesWithTheStoredChunksIsRefusedAndNothingIsAssembled(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(2 * EngineFixture.chunkSize + 100)
        let record = try fixture.engine.create(Self.deferred(content), owner: fixture.alice)
        for index in 0..<3 { try fixture.send(content, index, to: record.id) }
        // A shorter size leaves chunk 2 past the end; a longer one makes chunk 2 too short.
        for size in [Int64(2 * EngineFixture.chunkSize), Int64(2 * EngineFixture.chunkSize + 200)] {
            let error = receiverError {
                _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: claim(content, size: size))
            }
            #expect(error?.code == .lengthMismatch)
            #expect(error?.chunk == 2)
            #expect(!fixture.objectExists(record.id))
        }
        // A size needing more chunks than are stored is incomplete.
        let more = receiverError {
            _ = try fixture.engine.complete(
                record.id, owner: fixture.alice, claim: claim(content, size: Int64(4 * EngineFixture.chunkSize)))
        }
        #expect(more?.code == .lengthMismatch || more?.code == .incomplete)
        let status = try fixture.engine.status(record.id, owner: fixture.alice)
        #expect(status.record.state == .open)
        #expect(status.record.size == nil)
        // The right size still completes.
        let receipt = try fixture.engine.complete(
            record.id, owner: fixture.alice, claim: claim(content, size: Int64(content.bytes.count)))
        #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
    }

    @Test(arguments: CatalogueKind.allCases) func limitsApplyWhileTheUploadGrows(_ catalogue: CatalogueKind) throws {
        var limits = EngineFixture.smallLimits
        limits.maximumChunks = 4
        limits.maximumObjectSize = Int64(3 * EngineFixture.chunkSize + 10)
        let fixture = try EngineFixture(limits: limits, catalogue: catalogue)
        let content = fixture.native(5 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(Self.deferred(content), owner: fixture.alice)
        let pastChunks = receiverError { try fixture.send(content, 4, to: record.id) }
        #expect(pastChunks?.code == .tooLarge)
        let pastObject = receiverError { try fixture.send(content, 3, to: record.id) }
        #expect(pastObject?.code == .tooLarge)
        let long = receiverError {
            _ = try fixture.engine.openChunk(
                record.id, index: 0,
                descriptor: ChunkDescriptor(
                    length: EngineFixture.chunkSize + 1, crc32c: 0, sha256: SHA256.hash([]), link: nil),
                owner: fixture.alice)
        }
        #expect(long?.code == .lengthMismatch)
        let over = receiverError {
            _ = try fixture.engine.complete(
                record.id, owner: fixture.alice, claim: claim(content, size: limits.maximumObjectSize + 1))
        }
        #expect(over?.code == .tooLarge)
    }

    @Test(arguments: CatalogueKind.allCases) func creationWithoutASizeRefusesParityAndAContentID(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(EngineFixture.chunkSize)
        var withParity = Self.deferred(content)
        withParity.parity = ParityLayout(data: 4, parity: 1)
        #expect(
            receiverError { _ = try fixture.engine.create(withParity, owner: fixture.alice) }?.code == .malformedRequest
        )
        var withContentID = Self.deferred(content)
        withContentID.contentID = ACI(digest: SHA256.hash(content.bytes)).description
        #expect(
            receiverError { _ = try fixture.engine.create(withContentID, owner: fixture.alice) }?.code
                == .malformedRequest)
        var oddChunk = Self.deferred(content)
        oddChunk.chunkSize = EngineFixture.chunkSize + 1
        #expect(
            receiverError { _ = try fixture.engine.create(oddChunk, owner: fixture.alice) }?.code == .malformedRequest)
    }

    @Test(arguments: CatalogueKind.allCases) func aKnownSizeMustEqualAClaimedOne(_ catalogue: CatalogueKind) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = fixture.native(EngineFixture.chunkSize + 3)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in 0..<2 { try fixture.send(content, index, to: record.id) }
        let error = receiverError {
            _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: claim(content, size: 5))
        }
        #expect(error?.code == .malformedRequest)
        let receipt = try fixture.engine.complete(
            record.id, owner: fixture.alice, claim: claim(content, size: Int64(content.bytes.count)))
        #expect(receipt.size == Int64(content.bytes.count))
    }
}
