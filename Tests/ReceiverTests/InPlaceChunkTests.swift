import AetherIO
import AetherIntegrity
import AetherReceiver
import Foundation
import Testing

/// Native chunks are written in place into their upload's stream file, and completion renames that file into
/// place (no copy): these tests hold the durability rules that the staged-chunk design kept by construction.
@Suite struct InPlaceChunkTests {
    private static func inode(_ path: String) throws -> UInt64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.systemFileNumber] as? UInt64)
    }

    @Test func completionRenamesTheStreamTheChunksWereWrittenIntoWithoutACopy() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(4 * EngineFixture.chunkSize + 123)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in [4, 1, 3, 0, 2] { #expect(try fixture.send(content, index, to: record.id) == .stored) }
        let stream = fixture.directory.description + "/streams/" + record.id.rawValue
        let before = try Self.inode(stream)
        #expect(!fixture.objectExists(record.id))
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.description + "/chunks").isEmpty)
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        let object = fixture.directory.description + "/objects/" + record.id.rawValue
        #expect(try Self.inode(object) == before)
        #expect(!FileManager.default.fileExists(atPath: stream))
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func aWrongWholeDigestLeavesTheChunksInTheirStreamAndNoObject() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(2 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in 0..<2 { try fixture.send(content, index, to: record.id) }
        var claim = try content.claim
        claim.fileSHA256 = SHA256.hash([1, 2, 3])
        #expect(
            receiverError { _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: claim) }?.code
                == .digestMismatch)
        #expect(!fixture.objectExists(record.id))
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func aChunkBeingReceivedIsWaitedForThenTakenOverAndTheOlderRequestChangesNothingMore() throws {
        var limits = EngineFixture.smallLimits
        limits.chunkClaimWaitSeconds = 0.2
        let fixture = try EngineFixture(limits: limits)
        let content = fixture.native(2 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        // The first request stalls part way (its client's connection was reset; the receiver never saw it).
        let stalled = try fixture.engine.openChunk(
            record.id, index: 0, descriptor: content.descriptor(0), owner: fixture.alice)
        try stalled.write(Array(content.chunks[0].prefix(100)))
        // The client's retry waits for the region, then takes it over and writes the chunk whole.
        let waited = ContinuousClock.now
        let retry = try fixture.engine.openChunk(
            record.id, index: 0, descriptor: content.descriptor(0), owner: fixture.alice)
        #expect(waited.duration(to: .now) >= .milliseconds(200))
        try retry.write(Array(content.chunks[0].prefix(50)))
        // The stalled request can neither write, nor zero the region, nor commit.
        let late = receiverError { try stalled.write(Array(content.chunks[0].dropFirst(100))) }
        #expect(late?.code == .unavailable)
        #expect(late?.chunk == 0)
        #expect(receiverError { _ = try stalled.finish() } != nil)
        try retry.write(Array(content.chunks[0].dropFirst(50)))
        #expect(try retry.finish() == .stored)
        #expect(try fixture.engine.catalog.chunkReceipts(record.id).count == 1)
        // Other bytes for the stored index are a duplicate; the same bytes a retry.
        let other = fixture.native(2 * EngineFixture.chunkSize, seed: 9)
        #expect(
            receiverError {
                _ = try fixture.engine.openChunk(
                    record.id, index: 0, descriptor: other.descriptor(0), owner: fixture.alice)
            }?.code == .duplicateChunk)
        #expect(try fixture.send(content, 0, to: record.id) == .alreadyStored)
        try fixture.send(content, 1, to: record.id)
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func aTakenOverRequestThatIsDroppedDoesNotZeroTheNewerRequestsBytes() throws {
        var limits = EngineFixture.smallLimits
        limits.chunkClaimWaitSeconds = 0
        let fixture = try EngineFixture(limits: limits)
        let content = fixture.native(EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        var stalled: ChunkSink? = try fixture.engine.openChunk(
            record.id, index: 0, descriptor: content.descriptor(0), owner: fixture.alice)
        try stalled?.write(Array(content.chunks[0].prefix(4096)))
        let retry = try fixture.engine.openChunk(
            record.id, index: 0, descriptor: content.descriptor(0), owner: fixture.alice)
        try retry.write(content.chunks[0])
        // The stalled request ends now (its connection timed out): a discard would zero the region the retry wrote.
        stalled = nil
        #expect(try retry.finish() == .stored)
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func aRefusedOrAbandonedChunkLetsTheNextRequestWriteTheRegion() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(2 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        do {
            let abandoned = try fixture.engine.openChunk(
                record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice)
            try abandoned.write(EngineFixture.bytes(500, seed: 4))
        }
        let wrong = try fixture.engine.openChunk(
            record.id, index: 0, descriptor: content.descriptor(0), owner: fixture.alice)
        try wrong.write(EngineFixture.bytes(EngineFixture.chunkSize, seed: 5))
        #expect(receiverError { _ = try wrong.finish() }?.code == .digestMismatch)
        for index in 0..<2 { #expect(try fixture.send(content, index, to: record.id) == .stored) }
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func anObjectRenamedButNotRecordedReturnsToItsStreamAtRecovery() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(3 * EngineFixture.chunkSize + 7)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in 0..<4 { try fixture.send(content, index, to: record.id) }
        // A crash between the rename into place and the catalogue's commit.
        try fixture.blobStore.promote(.stream(record.id), to: .object(record.id))
        try fixture.restart()
        let report = try fixture.engine.recover()
        #expect(report.assembliesRolledBack == 1)
        #expect(!fixture.objectExists(record.id))
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).record.state == .open)
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func recoveryKeepsANativeStreamWithUnrecordedBytesAndDropsADedupAliasWithoutChunks() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(2 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try fixture.send(content, 1, to: record.id)
        // Bytes written into chunk 0's region without a receipt (a crash before the commit).
        let torn = try fixture.blobStore.place(into: .stream(record.id), at: 0)
        try torn.write(EngineFixture.bytes(300, seed: 8))
        try torn.commit()
        let empty = try fixture.engine.create(fixture.native(EngineFixture.chunkSize).newUpload, owner: fixture.alice)
        // A dedup alias (a link to another object) with no stream: it must never become a stream to write into.
        try fixture.blobStore.delete(.stream(empty.id))
        let alias = try fixture.blobStore.stage(.object(empty.id))
        try alias.write(EngineFixture.bytes(EngineFixture.chunkSize))
        try alias.commit()
        try fixture.restart()
        let report = try fixture.engine.recover()
        #expect(report.assembliesRolledBack == 1)
        #expect(!fixture.objectExists(empty.id))
        #expect(try fixture.blobStore.size(of: .stream(empty.id)) == nil)
        #expect(try fixture.blobStore.size(of: .stream(record.id)) == Int64(2 * EngineFixture.chunkSize))
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).received == [false, true])
        try fixture.send(content, 0, to: record.id)
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func chunkFilesOfAnOlderStoreMoveIntoTheStreamAtRecovery() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(3 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in 0..<2 { try fixture.send(content, index, to: record.id) }
        // The layout an older receiver left: acknowledged chunks as files of their own, no stream.
        let store = try fixture.blobStore
        try store.delete(.stream(record.id))
        for index in 0..<2 {
            let writer = try store.stage(.chunk(record.id, index: index))
            try writer.write(content.chunks[index])
            try writer.commit()
        }
        try fixture.restart()
        _ = try fixture.engine.recover()
        #expect(try store.keys().filter { if case .chunk = $0 { true } else { false } }.isEmpty)
        try fixture.send(content, 2, to: record.id)
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test func aSpotCheckReadsItsRangesFromTheStream() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(3 * EngineFixture.chunkSize + 5)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in [3, 1] { try fixture.send(content, index, to: record.id) }
        let nonce = EngineFixture.bytes(32, seed: 6)
        let items = try content.items([1, 2]) + [try ByzantineChallenge.Item(index: 3, offset: 2, length: 3)]
        let answers = try fixture.engine.challenge(record.id, items: items, nonce: nonce, owner: fixture.alice)
        #expect(answers.map(\.sha256) == [content.hashes[1], nil, content.hashes[3]])
        #expect(answers[0].mac == (try content.mac(items[0], nonce: nonce, id: record.id)))
        #expect(answers[1].mac == nil)
        #expect(answers[2].mac == (try content.mac(items[2], nonce: nonce, id: record.id)))
    }

    @Test(arguments: [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [1, 0, 3, 2, 4], [2, 0, 4, 1, 3]])
    func theWholeDigestFedAsThePrefixGrowsMatchesTheBytesWhateverTheOrder(order: [Int]) throws {
        let fixture = try EngineFixture()
        let content = fixture.native(4 * EngineFixture.chunkSize + 999)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in order { try fixture.send(content, index, to: record.id) }
        let receipt = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
    }

    @Test func aRestartHalfwayLosesTheFedDigestAndCompletionHashesTheRest() throws {
        let fixture = try EngineFixture()
        let content = fixture.native(4 * EngineFixture.chunkSize + 999)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        for index in 0..<3 { try fixture.send(content, index, to: record.id) }
        try fixture.restart()
        _ = try fixture.engine.recover()
        for index in 3..<5 { try fixture.send(content, index, to: record.id) }
        let receipt = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(receipt.fileSHA256 == SHA256.hash(content.bytes))
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }
}
