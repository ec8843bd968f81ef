import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTestSupport
import Foundation
import Testing

/// A native chunk cut part way keeps its received prefix, and a continuation goes on from it (`docs/PROTOCOL.md`
/// 3.2.2), on the engine: what is parked and where its bytes are, which continuations are taken, refused or fail,
/// what drops a partial, a takeover's handover, the bounds, and a restart.
@Suite struct ChunkContinuationEngineTests {
    static let size = 3 * EngineFixture.chunkSize + 1000

    /// Bytes `range` of the upload's stream file, as stored.
    static func stream(_ fixture: EngineFixture, _ id: UploadID, _ range: Range<Int>) throws -> [UInt8] {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.directory.description + "/streams/" + id.rawValue))
        return Array(data[range])
    }

    /// Opens chunk `index` of `content`, writes `bytes` (default: its first `count` bytes), and cuts it.
    @discardableResult
    static func cut(
        _ fixture: EngineFixture, _ content: EngineFixture.NativeContent, _ index: Int, _ id: UploadID, count: Int,
        bytes: [UInt8]? = nil
    ) throws -> Bool {
        let sink = try fixture.engine.openChunk(
            id, index: index, descriptor: content.descriptor(index), owner: fixture.alice)
        try sink.write(bytes ?? Array(content.chunks[index].prefix(count)))
        return sink.interrupted()
    }

    /// Sends the rest of chunk `index` of `content` from `from`.
    static func continuation(
        _ fixture: EngineFixture, _ content: EngineFixture.NativeContent, _ index: Int, _ id: UploadID, from: Int
    ) throws -> ChunkOutcome {
        let sink = try fixture.engine.openChunk(
            id, index: index, descriptor: content.descriptor(index), owner: fixture.alice, from: from)
        try sink.write(Array(content.chunks[index].dropFirst(from)))
        return try sink.finish()
    }

    static func prefixes(_ fixture: EngineFixture, _ id: UploadID) throws -> [ChunkPrefix] {
        try fixture.engine.partials(id, owner: fixture.alice)
    }

    @Test func aCutChunkKeepsItsPrefixDurableInPlaceAndAContinuationCompletesTheObjectByteIdentical() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(Self.size)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        #expect(try Self.cut(fixture, content, 1, record.id, count: 5000))
        #expect(try Self.prefixes(fixture, record.id) == [ChunkPrefix(index: 1, received: 5000)])
        let start = EngineFixture.chunkSize
        #expect(try Self.stream(fixture, record.id, start..<start + 5000) == Array(content.chunks[1].prefix(5000)))
        // Cut again part way through the continuation: the prefix grows, counted from the chunk's first byte.
        let again = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice, from: 5000)
        try again.write(Array(content.chunks[1][5000..<9000]))
        #expect(again.interrupted())
        #expect(try Self.prefixes(fixture, record.id) == [ChunkPrefix(index: 1, received: 9000)])
        #expect(try Self.continuation(fixture, content, 1, record.id, from: 9000) == .stored)
        #expect(try Self.prefixes(fixture, record.id).isEmpty)
        #expect(fixture.engine.partialCount == 0)
        for index in [0, 2, 3] { try fixture.send(content, index, to: record.id) }
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func aContinuationFromAnotherOffsetOrForOtherBytesIsRefusedWithWhatIsHeldAndThePartialKept() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(Self.size)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try Self.cut(fixture, content, 2, record.id, count: 7000)
        func refusal(_ index: Int, from: Int, descriptor: ChunkDescriptor? = nil) -> ReceiverError? {
            receiverError {
                _ = try fixture.engine.openChunk(
                    record.id, index: index, descriptor: descriptor ?? content.descriptor(index), owner: fixture.alice,
                    from: from)
            }
        }
        let early = refusal(2, from: 6000)
        #expect(early?.code == .partialMismatch)
        #expect(early?.chunk == 2)
        #expect(early?.offset == 7000)
        #expect(refusal(2, from: 8000)?.offset == 7000)
        // Nothing held of chunk 0; chunk 2 of other bytes (another file) holds nothing of these.
        #expect(refusal(0, from: 100)?.offset == 0)
        #expect(refusal(2, from: 7000, descriptor: fixture.native(Self.size, seed: 7).descriptor(2))?.offset == 0)
        #expect(refusal(2, from: 0)?.code == .malformedRequest)
        #expect(refusal(2, from: EngineFixture.chunkSize)?.code == .malformedRequest)
        #expect(try Self.prefixes(fixture, record.id) == [ChunkPrefix(index: 2, received: 7000)])
        #expect(try Self.continuation(fixture, content, 2, record.id, from: 7000) == .stored)
    }

    @Test func aContinuationWhosePrefixWasOtherBytesStoresNothingAndDropsThePartial() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(Self.size)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        // The cut request carried damaged bytes under the chunk's descriptor.
        try Self.cut(fixture, content, 1, record.id, count: 6000, bytes: EngineFixture.bytes(6000, seed: 99))
        let sink = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice, from: 6000)
        try sink.write(Array(content.chunks[1].dropFirst(6000)))
        #expect(receiverError { _ = try sink.finish() }?.code == .digestMismatch)
        #expect(try fixture.engine.catalog.chunkReceipts(record.id).isEmpty)
        #expect(try Self.prefixes(fixture, record.id).isEmpty)
        // The whole region is undone, the prefix included, as a refused chunk leaves it.
        let start = EngineFixture.chunkSize
        #expect(try Self.stream(fixture, record.id, start..<start + EngineFixture.chunkSize).allSatisfy { $0 == 0 })
        #expect(try fixture.send(content, 1, to: record.id) == .stored)
    }

    @Test func aWholeRequestDropsThePartialAndAStoredChunkTakesTheRestUnchecked() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(Self.size)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try Self.cut(fixture, content, 0, record.id, count: 3000)
        let whole = try fixture.engine.openChunk(
            record.id, index: 0, descriptor: content.descriptor(0), owner: fixture.alice)
        #expect(try Self.prefixes(fixture, record.id).isEmpty)
        try whole.write(content.chunks[0])
        #expect(try whole.finish() == .stored)
        // A continuation that raced the whole chunk's storing is answered as a retry of a stored chunk.
        #expect(try Self.continuation(fixture, content, 0, record.id, from: 3000) == .alreadyStored)
        #expect(try fixture.engine.catalog.chunkReceipts(record.id).count == 1)
    }

    @Test func aTakeOverHandsTheStalledRequestsPrefixToTheContinuationThatTookItOver() throws {
        var limits = EngineFixture.smallLimits
        limits.chunkClaimWaitSeconds = 0.1
        let fixture = try EngineFixture(limits: limits)
        let content = fixture.native(Self.size)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        // The first request stalls part way (its connection froze; the receiver never saw it end).
        let stalled = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice)
        try stalled.write(Array(content.chunks[1].prefix(6000)))
        // The status lists what it received so far: a client that gave up on it continues from there.
        #expect(try Self.prefixes(fixture, record.id) == [ChunkPrefix(index: 1, received: 6000)])
        let taking = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice, from: 6000)
        #expect(receiverError { try stalled.write(Array(content.chunks[1][6000..<7000])) }?.code == .unavailable)
        #expect(!stalled.interrupted())
        try taking.write(Array(content.chunks[1].dropFirst(6000)))
        #expect(try taking.finish() == .stored)
        for index in [0, 2, 3] { try fixture.send(content, index, to: record.id) }
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func aWholeRequestTakingAStalledChunkOverWritesItWhole() throws {
        var limits = EngineFixture.smallLimits
        limits.chunkClaimWaitSeconds = 0
        let fixture = try EngineFixture(limits: limits)
        let content = fixture.native(Self.size)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        let stalled = try fixture.engine.openChunk(
            record.id, index: 0, descriptor: content.descriptor(0), owner: fixture.alice)
        try stalled.write(Array(content.chunks[0].prefix(100)))
        #expect(try fixture.send(content, 0, to: record.id) == .stored)
        #expect(try Self.prefixes(fixture, record.id).isEmpty)
        #expect(fixture.engine.partialCount == 0)
    }

    @Test func partialsAreBoundedPerUploadAndInAllTheOldestGoingFirst() throws {
        var limits = EngineFixture.smallLimits
        limits.maximumPartialsPerUpload = 2
        limits.maximumPartials = 3
        let fixture = try EngineFixture(limits: limits)
        let content = fixture.native(Self.size)
        let first = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        let second = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in 0..<3 { try Self.cut(fixture, content, index, first.id, count: 100 + index) }
        #expect(try Self.prefixes(fixture, first.id).map(\.index) == [1, 2])
        try Self.cut(fixture, content, 3, second.id, count: 50)
        try Self.cut(fixture, content, 0, second.id, count: 60)
        #expect(fixture.engine.partialCount == 3)
        #expect(try Self.prefixes(fixture, first.id).map(\.index) == [2])
        #expect(
            try Self.prefixes(fixture, second.id) == [
                ChunkPrefix(index: 0, received: 60), .init(index: 3, received: 50),
            ])
        // A chunk cut again replaces its own partial, not another.
        try Self.cut(fixture, content, 0, second.id, count: 70)
        #expect(try Self.prefixes(fixture, second.id).map(\.received) == [70, 50])
        #expect(fixture.engine.partialCount == 3)
    }

    @Test func cancelExpiryAndTheChunkStoredWholeDropPartials() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(Self.size)
        let cancelled = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        let expiring = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        let stored = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try Self.cut(fixture, content, 1, cancelled.id, count: 100)
        try Self.cut(fixture, content, 2, expiring.id, count: 200)
        try Self.cut(fixture, content, 3, stored.id, count: 300)
        #expect(fixture.engine.partialCount == 3)
        try fixture.engine.cancel(cancelled.id, owner: fixture.alice)
        #expect(fixture.engine.partialCount == 2)
        try fixture.send(content, 3, to: stored.id)
        #expect(try Self.prefixes(fixture, stored.id).isEmpty)
        #expect(fixture.engine.partialCount == 1)
        fixture.clock.advance(by: .seconds(fixture.limits.expirySeconds + 10))
        #expect(try fixture.engine.expire().contains(expiring.id))
        #expect(fixture.engine.partialCount == 0)
    }

    @Test func aRestartLosesThePartialsHarmlessly() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(Self.size)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try Self.cut(fixture, content, 1, record.id, count: 8000)
        try fixture.restart()
        #expect(try Self.prefixes(fixture, record.id).isEmpty)
        let refused = receiverError { _ = try Self.continuation(fixture, content, 1, record.id, from: 8000) }
        #expect(refused?.code == .partialMismatch)
        #expect(refused?.offset == 0)
        for index in 0..<4 { try fixture.send(content, index, to: record.id) }
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func nothingIsKeptOfAChunkCutBeforeItsFirstByte() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(Self.size)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        #expect(try !Self.cut(fixture, content, 1, record.id, count: 0))
        #expect(fixture.engine.partialCount == 0)
        #expect(try fixture.send(content, 1, to: record.id) == .stored)
    }
}
