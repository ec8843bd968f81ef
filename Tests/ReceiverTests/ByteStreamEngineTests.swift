import AetherIO
import AetherIntegrity
import AetherReceiver
import Foundation
import Testing

@Suite struct ByteStreamEngineTests {
    @Test(arguments: CatalogueKind.allCases) func anIETFUploadIsCreatedAppendedResumedAndCompletedIntoAVisibleObject(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = EngineFixture.bytes(100_000)
        let record = try fixture.engine.create(
            NewUpload(uploadProtocol: .ietf, size: Int64(content.count), expectedSHA256: SHA256.hash(content)),
            owner: fixture.alice)
        #expect(record.id.rawValue.count == 26)
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).offset == 0)

        let first = try fixture.append(Array(content[0..<40_000]), to: record.id, at: 0, completes: false)
        #expect(first == AppendResult(offset: 40_000, completed: false, receipt: nil))
        #expect(!fixture.objectExists(record.id))

        // A connection that breaks mid-body keeps what arrived.
        let broken = try fixture.engine.openAppend(record.id, offset: 40_000, owner: fixture.alice, length: 60_000)
        try broken.write(Array(content[40_000..<50_000]))
        #expect(try broken.interrupted() == 50_000)
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).offset == 50_000)

        // Resuming anywhere but the stored offset is refused with that offset.
        let stale = receiverError { _ = try fixture.engine.openAppend(record.id, offset: 40_000, owner: fixture.alice) }
        #expect(stale?.code == .offsetMismatch)
        #expect(stale?.offset == 50_000)

        let last = try fixture.append(Array(content[50_000...]), to: record.id, at: 50_000, completes: true)
        #expect(last.completed)
        #expect(last.offset == 100_000)
        #expect(last.receipt?.fileSHA256 == SHA256.hash(content))
        #expect(last.receipt?.cid == CIDv1(digest: SHA256.hash(content)).string)
        #expect(try fixture.objectBytes(record.id) == content)
        let status = try fixture.engine.status(record.id, owner: fixture.alice)
        #expect(status.isComplete)
        #expect(status.expiresAt == nil)
    }

    @Test(arguments: CatalogueKind.allCases) func aTusUploadCompletesWhenTheOffsetReachesTheSize(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let content = EngineFixture.bytes(5000, seed: 2)
        let record = try fixture.engine.create(
            NewUpload(uploadProtocol: .tus, size: 5000, metadata: ["filename": Array("a.bin".utf8)]),
            owner: fixture.alice)
        #expect(try fixture.append(Array(content[0..<3000]), to: record.id, at: 0).completed == false)
        let done = try fixture.append(Array(content[3000...]), to: record.id, at: 3000)
        #expect(done.completed)
        #expect(try fixture.objectBytes(record.id) == content)
        #expect(
            try fixture.engine.status(record.id, owner: fixture.alice).record.metadata["filename"]
                == Array("a.bin".utf8))
    }

    @Test(arguments: CatalogueKind.allCases) func aDeferredLengthIsSetByALaterAppend(_ catalogue: CatalogueKind) throws
    {
        let fixture = try EngineFixture(catalogue: catalogue)
        let record = try fixture.engine.create(NewUpload(uploadProtocol: .tus), owner: fixture.alice)
        #expect(record.size == nil)
        try fixture.append([1, 2, 3], to: record.id, at: 0)
        let sink = try fixture.engine.openAppend(
            record.id, request: AppendRequest(offset: 3, length: 2, uploadLength: 5), owner: fixture.alice)
        try sink.write([4, 5])
        #expect(try sink.finish().completed)
        #expect(try fixture.objectBytes(record.id) == [1, 2, 3, 4, 5])
    }

    @Test(arguments: CatalogueKind.allCases) func bytesPastTheSizeAreRefusedAndNothingIsCommitted(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let record = try fixture.engine.create(NewUpload(uploadProtocol: .tus, size: 10), owner: fixture.alice)
        let sink = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice)
        try sink.write([UInt8](repeating: 1, count: 6))
        #expect(receiverError { try sink.write([UInt8](repeating: 2, count: 6)) }?.code == .tooLarge)
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).offset == 0)
        // The append ended, so the next one can start.
        #expect(try fixture.append([UInt8](repeating: 3, count: 10), to: record.id, at: 0).completed)
    }

    @Test(arguments: CatalogueKind.allCases) func aSecondAppendWaitsForTheFirstAndIsAConflictOnceTheFirstCommitted(
        _ catalogue: CatalogueKind
    ) throws {
        var limits = EngineFixture.smallLimits
        limits.chunkClaimWaitSeconds = 30
        let fixture = try EngineFixture(limits: limits, catalogue: catalogue)
        let record = try fixture.engine.create(NewUpload(uploadProtocol: .ietf, size: 10), owner: fixture.alice)
        let first = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice)
        // The second request (a retry racing its own first attempt) waits for the stream; the first one ends soon.
        // It waits on a thread of its own: a task would hold one of the few cooperative threads for the wait.
        let engine = fixture.engine
        let alice = fixture.alice
        let second = ThreadOutcome<ReceiverError?>()
        Thread { second.set(receiverError { _ = try engine.openAppend(record.id, offset: 0, owner: alice) }) }.start()
        Thread.sleep(forTimeInterval: 0.1)
        try first.write([1, 2, 3])
        #expect(try first.finish().offset == 3)
        let error = try #require(second.wait(seconds: 60))
        #expect(error?.code == .offsetMismatch)
        #expect(error?.offset == 3)
        #expect(try fixture.append([4], to: record.id, at: 3).offset == 4)
    }

    @Test(arguments: CatalogueKind.allCases) func aPerAppendChecksumThatFailsDropsTheWholeAppend(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let record = try fixture.engine.create(NewUpload(uploadProtocol: .tus, size: 8), owner: fixture.alice)
        let wrong = AppendRequest.Digest(algorithm: .sha1, bytes: SHA1.hash([9, 9, 9, 9]))
        let sink = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice, length: 4, digest: wrong)
        try sink.write([1, 2, 3, 4])
        #expect(receiverError { _ = try sink.finish() }?.code == .digestMismatch)
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).offset == 0)

        // With a digest, an interrupted append is dropped whole.
        let right = AppendRequest.Digest(algorithm: .crc32, bytes: Self.bigEndian(CRC32.checksum([1, 2, 3, 4])))
        let interrupted = try fixture.engine.openAppend(
            record.id, offset: 0, owner: fixture.alice, length: 4, digest: right)
        try interrupted.write([1, 2])
        #expect(try interrupted.interrupted() == 0)

        let good = try fixture.engine.openAppend(record.id, offset: 0, owner: fixture.alice, length: 4, digest: right)
        try good.write([1, 2, 3, 4])
        #expect(try good.finish().offset == 4)
    }

    @Test(arguments: CatalogueKind.allCases) func aWholeObjectDigestMismatchLeavesNoObject(_ catalogue: CatalogueKind)
        throws
    {
        let fixture = try EngineFixture(catalogue: catalogue)
        let record = try fixture.engine.create(
            NewUpload(uploadProtocol: .ietf, size: 4, expectedSHA256: SHA256.hash([0, 0, 0, 0])), owner: fixture.alice)
        #expect(
            receiverError { try fixture.append([1, 2, 3, 4], to: record.id, at: 0, completes: true) }?.code
                == .digestMismatch)
        #expect(!fixture.objectExists(record.id))
        #expect(try fixture.engine.status(record.id, owner: fixture.alice).isComplete == false)
    }

    @Test(arguments: CatalogueKind.allCases) func aRepeatedCompletingAppendAnswersTheCompletedState(
        _ catalogue: CatalogueKind
    ) throws {
        let fixture = try EngineFixture(catalogue: catalogue)
        let record = try fixture.engine.create(NewUpload(uploadProtocol: .ietf, size: 3), owner: fixture.alice)
        let done = try fixture.append([1, 2, 3], to: record.id, at: 0, completes: true)
        let again = try fixture.append([], to: record.id, at: 3, completes: true)
        #expect(again.completed)
        #expect(again.receipt == done.receipt)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }
}

/// A value set once by another thread, waited for with a deadline.
final class ThreadOutcome<Value>: @unchecked Sendable {
    // @unchecked: every access goes through `condition`.
    private let condition = NSCondition()
    private var value: Value?

    func set(_ new: Value) {
        condition.withLock {
            value = new
            condition.broadcast()
        }
    }

    /// The value once set; nil when `seconds` pass first.
    func wait(seconds: Double) -> Value? {
        let deadline = Date().addingTimeInterval(seconds)
        return condition.withLock {
            while value == nil, condition.wait(until: deadline) {}
            return value
        }
    }
}
