import AetherIO
import AetherIntegrity
import AetherTestSupport
import Foundation
import Testing

@testable import AetherReceiver

/// An upload with a request writing into it is not idle: expiry (the sweep, a status, a later request) never
/// removes it, its recorded time moves when the request ends, and the sweep records the activity in the catalogue
/// so that another receiver sharing it does not expire the upload either. A newer append takes a stale one over.
@Suite struct UploadActivityTests {
    @Test(arguments: CatalogueKind.allCases) func aTusAppendLongerThanTheExpiryCompletesAndIsNeverExpired(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let expiry = fixture.limits.expirySeconds
        let content = EngineFixture.bytes(40_000, seed: 3)
        let record = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, size: Int64(content.count)), owner: fixture.alice)
        let sink = try fixture.engine.openAppend(
            record.id, offset: 0, owner: fixture.alice, length: Int64(content.count))
        // One PATCH whose body takes four expiry times to arrive: the sweep and status requests run meanwhile.
        for piece in 0..<4 {
            try sink.write(Array(content[(piece * 10_000)..<(piece * 10_000 + 10_000)]))
            fixture.clock.advance(by: .seconds(expiry))
            // Expiring this upload directly (as a status request or the sweep would, whatever the catalogue
            // records) finds its writer and removes nothing.
            #expect(try !fixture.engine.expireOne(record.id))
            #expect(try fixture.engine.expire().isEmpty)
            let status = try fixture.engine.status(record.id, owner: fixture.alice)
            #expect(status.record.state == .open)
            #expect(try #require(status.expiresAt) > fixture.clock.wallWholeSeconds())
        }
        let result = try sink.finish()
        #expect(result.completed)
        #expect(try fixture.objectBytes(record.id) == content)
    }

    @Test(arguments: CatalogueKind.allCases) func anUploadExpiresOneExpiryTimeAfterItsLastRequestEnded(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let expiry = fixture.limits.expirySeconds
        let record = try fixture.engine.create(NewUpload(uploadProtocol: .ietf, size: 100), owner: fixture.alice)
        let sink = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice)
        try sink.write(EngineFixture.bytes(30))
        fixture.clock.advance(by: .seconds(2 * expiry))
        // A later request on the same upload while the first still writes is not refused as expired either.
        #expect(
            receiverError { _ = try fixture.engine.openAppend(record.id, offset: 10, owner: fixture.alice) }?.code
                == .offsetMismatch)
        #expect(try sink.interrupted() == 30)
        fixture.clock.advance(by: .seconds(expiry - 1))
        #expect(try fixture.engine.expire().isEmpty)
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).offset == 30)
        fixture.clock.advance(by: .seconds(1))
        #expect(try fixture.engine.expire() == [record.id])
        #expect(receiverError { _ = try fixture.engine.status(record.id, owner: fixture.alice) }?.code == .expired)
        #expect(fixture.engine.activityCount == 0)
    }

    @Test(arguments: CatalogueKind.allCases) func aNativeChunkSlowerThanTheExpiryIsStoredAndTheUploadCompletes(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let expiry = fixture.limits.expirySeconds
        let content = fixture.native(2 * EngineFixture.chunkSize)
        let record = try fixture.engine.create(content.newUpload, owner: fixture.alice)
        try fixture.send(content, 0, to: record.id)
        let sink = try fixture.engine.openChunk(
            record.id, index: 1, descriptor: content.descriptor(1), owner: fixture.alice)
        try sink.write(Array(content.chunks[1].prefix(1000)))
        fixture.clock.advance(by: .seconds(2 * expiry))
        #expect(try fixture.engine.expire().isEmpty)
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).record.state == .open)
        try sink.write(Array(content.chunks[1].dropFirst(1000)))
        #expect(try sink.finish() == .stored)
        _ = try fixture.engine.complete(record.id, owner: fixture.alice, claim: content.claim)
        #expect(try fixture.objectBytes(record.id) == content.bytes)
    }

    @Test(arguments: CatalogueKind.allCases) func aCancelWhileAnAppendRunsDeletesTheStreamOnlyOnceTheAppendEnded(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let record = try fixture.engine.create(NewUpload(uploadProtocol: .tus, size: 100), owner: fixture.alice)
        let sink = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice)
        try sink.write(EngineFixture.bytes(40))
        try fixture.engine.cancel(record.id, owner: fixture.alice)
        #expect(receiverError { _ = try fixture.engine.status(record.id, owner: fixture.alice) }?.code == .expired)
        // The writer's file is still there while it writes.
        #expect(try fixture.blobStore.size(of: .stream(record.id)) == 40)
        try sink.write(EngineFixture.bytes(10))
        #expect(receiverError { _ = try sink.finish() }?.code == .expired)
        #expect(try fixture.blobStore.keys().isEmpty)
        #expect(fixture.engine.activityCount == 0)
    }

    /// Fleet mode: receiver B knows nothing of receiver A's writer but what A's sweep records in the shared
    /// catalogue.
    @Test(arguments: CatalogueKind.allCases) func anotherReceiverSharingTheCatalogueDoesNotExpireAnUploadBeingReceived(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let expiry = fixture.limits.expirySeconds
        let sharedCatalogue: any UploadCatalog =
            if let url = fixture.postgresURL {
                try PostgresCatalog(url: url)
            } else {
                try SQLiteUploadCatalog(path: fixture.directory.appending("catalog.sqlite3"))
            }
        let other = UploadEngine(
            blobs: try DirectoryBlobStore(root: fixture.directory), catalog: sharedCatalogue, limits: fixture.limits,
            clock: fixture.clock)
        let content = EngineFixture.bytes(3000, seed: 8)
        let record = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, size: Int64(content.count)), owner: fixture.alice)
        let sink = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice)
        for piece in 0..<3 {
            try sink.write(Array(content[(piece * 1000)..<(piece * 1000 + 1000)]))
            // A's sweep runs four times per expiry time (as `aether serve` schedules it), B's after it.
            for _ in 0..<4 {
                fixture.clock.advance(by: .seconds(expiry / 4))
                _ = try fixture.engine.expire()
                #expect(try other.expire().isEmpty)
            }
            #expect(try other.status(record.id, owner: fixture.alice).record.state == .open)
        }
        #expect(try sink.finish().completed)
        #expect(try fixture.objectBytes(record.id) == content)
    }

    @Test(arguments: CatalogueKind.allCases) func aStaleAppendIsTakenOverAndCanChangeNothingMore(
        _ catalogue: CatalogueKind
    ) throws {
        var limits = EngineFixture.smallLimits
        limits.chunkClaimWaitSeconds = 0.2
        let fixture = try EngineFixture(limits: limits, catalogue: catalogue)
        let content = EngineFixture.bytes(10_000, seed: 5)
        let record = try fixture.engine.create(
            NewUpload(uploadProtocol: .ietf, size: Int64(content.count), expectedSHA256: SHA256.hash(content)),
            owner: fixture.alice)
        try fixture.append(Array(content[0..<3000]), to: record.id, at: 0, completes: false)
        // The first attempt's connection froze after 2,000 more bytes; it never closed.
        var stale: AppendSink? = try fixture.engine.openAppend(record.id, offset: 3000, owner: fixture.alice)
        try stale?.write(Array(content[3000..<5000]))
        // The client's retry asks for the offset (the committed one), then appends from it.
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).offset == 3000)
        let started = ContinuousClock.now
        let retry = try fixture.engine.openAppend(
            record.id, offset: 3000, owner: fixture.alice, length: 7000, completes: true)
        #expect(started.duration(to: .now) >= .milliseconds(200))
        // The stale request's bytes past the committed offset are gone, never mixed with the retry's.
        #expect(try fixture.blobStore.size(of: .stream(record.id)) == 3000)
        try retry.write(Array(content[3000..<6000]))
        // Waking up, the stale request can write nothing, commit nothing, and truncate nothing.
        let late = receiverError { try stale?.write(EngineFixture.bytes(500, seed: 99)) }
        #expect(late?.code == .unavailable)
        #expect(receiverError { _ = try stale?.interrupted() } != nil)
        stale = nil
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).offset == 3000)
        try retry.write(Array(content[6000...]))
        let done = try retry.finish()
        #expect(done.completed)
        #expect(try fixture.objectBytes(record.id) == content)
    }

    /// "The same client" is the upload's owner: another client's append is refused at once and cuts nothing.
    @Test func anotherClientsAppendNeitherWaitsNorTakesTheUploadOver() throws {
        var limits = EngineFixture.smallLimits
        limits.chunkClaimWaitSeconds = 0
        let fixture = try EngineFixture(limits: limits)
        let content = EngineFixture.bytes(2000, seed: 7)
        let record = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, size: Int64(content.count)), owner: fixture.alice)
        let running = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice)
        try running.write(Array(content[0..<1000]))
        // Refused as another client's upload (403, or 404 where the receiver hides that it exists).
        let refused = receiverError { _ = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.mallory) }
        #expect(refused?.code == .forbidden || refused?.code == .notFound)
        try running.write(Array(content[1000...]))
        #expect(try running.finish().completed)
        #expect(try fixture.objectBytes(record.id) == content)
    }

    @Test(arguments: CatalogueKind.allCases) func aStaleAppendThatWakesBeforeTheTakeOverStillEndsAtACommittedOffset(
        _ catalogue: CatalogueKind
    ) throws {
        var limits = EngineFixture.smallLimits
        limits.chunkClaimWaitSeconds = 0
        let fixture = try EngineFixture(limits: limits, catalogue: catalogue)
        let content = EngineFixture.bytes(4000, seed: 6)
        let record = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, size: Int64(content.count)), owner: fixture.alice)
        let stale = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice)
        try stale.write(Array(content[0..<1500]))
        // Its connection closes before any retry: the bytes that arrived are kept, as before.
        #expect(try stale.interrupted() == 1500)
        // A retry at the old offset is a conflict naming the stored one, not a take-over.
        let conflict = receiverError { _ = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice) }
        #expect(conflict?.code == .offsetMismatch)
        #expect(conflict?.offset == 1500)
        #expect(try fixture.append(Array(content[1500...]), to: record.id, at: 1500).completed)
        #expect(try fixture.objectBytes(record.id) == content)
    }

    @Test(arguments: CatalogueKind.allCases) func theGateAndActivityMapsReturnToTheirBaselineAfterManyUploads(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let engine = fixture.engine
        #expect(engine.gateCount == 0)
        #expect(engine.activityCount == 0)
        let cycles = catalogue == .sqlite ? 400 : 80
        for cycle in 0..<cycles {
            let record = try engine.create(NewUpload(uploadProtocol: .tus, size: 4), owner: fixture.alice)
            switch cycle % 4 {
            case 0:
                try engine.cancel(record.id, owner: fixture.alice)
            case 1:
                try fixture.append([1, 2], to: record.id, at: 0)
                try engine.cancel(record.id, owner: fixture.alice)
            case 2:
                try fixture.append([1, 2, 3, 4], to: record.id, at: 0)
            default:
                try fixture.append([1], to: record.id, at: 0)
                fixture.clock.advance(by: .seconds(fixture.limits.expirySeconds + 1))
                #expect(try engine.expire() == [record.id])
            }
        }
        #expect(engine.gateCount == 0)
        #expect(engine.activityCount == 0)
    }
}
