import AetherIO
import AetherReceiver
import AetherScheduling
import FoundationEssentials
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// The native backend with cuts: each attempt at chunk `index` while `cuts` holds positions takes the chunk's bytes up
/// to the next position into the receiver's engine and cuts them there (the sink is interrupted, as when the
/// connection drops), then the attempt throws `.connectionClosed`. Every attempt at that chunk is recorded with where
/// it started. With `stalls`, the cut request is not interrupted but left open (a connection that froze: the receiver
/// never sees it end); with `grows`, the first continuation finds the receiver holding that many bytes more than it
/// named (another request went on meanwhile), so the receiver refuses it with what it holds.
final class CuttingNativeBackend: RunSendingBackend, @unchecked Sendable {
    // @unchecked: the fields are set once in init; the mutable state sits behind Mutexes.
    let inner: NativeBackend
    let engine: UploadEngine
    let index: Int
    let delay: Duration
    let stalls: Bool
    let cuts: Mutex<[Int]>
    let grows: Mutex<Int?>
    let starts = Mutex<[Int64]>([])
    /// The requests left open by `stalls`.
    let stalled = Mutex<[ChunkSink]>([])

    init(
        inner: NativeBackend, engine: UploadEngine, index: Int, cuts: [Int], delay: Duration = .zero,
        stalls: Bool = false, grows: Int? = nil
    ) {
        self.inner = inner
        self.engine = engine
        self.index = index
        self.cuts = Mutex(cuts)
        self.delay = delay
        self.stalls = stalls
        self.grows = Mutex(grows)
    }

    var capabilities: BackendCapabilities { inner.capabilities }
    func maximumRunParts(of upload: RemoteUpload) -> Int { inner.maximumRunParts(of: upload) }
    func continuesCutParts(of upload: RemoteUpload) -> Bool { inner.continuesCutParts(of: upload) }
    func holdings(of upload: RemoteUpload) async throws(TransportError) -> RunHoldings {
        try await inner.holdings(of: upload)
    }
    func create(_ description: UploadDescription) async throws(TransportError) -> RemoteUpload {
        try await inner.create(description)
    }
    func progress(of upload: RemoteUpload) async throws(TransportError) -> RemoteProgress {
        try await inner.progress(of: upload)
    }
    func send(_ part: UploadPart, to upload: RemoteUpload) async throws(TransportError) -> PartReceipt {
        if part.index == index { starts.withLock { $0.append(-1) } }
        return try await inner.send(part, to: upload)
    }
    func send(run parts: [UploadPart], to upload: RemoteUpload) async throws(TransportError) -> RunOutcome {
        try await cutting(parts, from: 0, upload)
        return try await inner.send(run: parts, to: upload)
    }
    func send(run parts: [UploadPart], from: Int64, to upload: RemoteUpload) async throws(TransportError)
        -> RunOutcome
    {
        try await cutting(parts, from: from, upload)
        return try await inner.send(run: parts, from: from, to: upload)
    }
    func complete(_ upload: RemoteUpload, summary: CompletionSummary) async throws(TransportError) -> UploadReceipt {
        try await inner.complete(upload, summary: summary)
    }
    func abort(_ upload: RemoteUpload) async throws(TransportError) { try await inner.abort(upload) }

    private func cutting(_ parts: [UploadPart], from: Int64, _ upload: RemoteUpload) async throws(TransportError) {
        guard let part = parts.first, part.index == index else { return }
        starts.withLock { $0.append(from) }
        if from > 0,
            let more = grows.withLock({ value in
                defer { value = nil }; return value
            })
        {
            // Another request continues the prefix by `more` bytes and is cut: the continuation names too few.
            cut(part, upload, from: from, to: Int(from) + more, stalling: false)
            return
        }
        guard let cut = cuts.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return }
        self.cut(part, upload, from: from, to: cut, stalling: stalls)
        try? await Task.sleep(for: delay)
        throw TransportError(.connectionClosed, "the test cut chunk \(part.index) at byte \(cut)")
    }

    /// Writes bytes `from..<to` of `part` into the receiver as one request, then cuts it (or, `stalling`, leaves it
    /// open).
    private func cut(_ part: UploadPart, _ upload: RemoteUpload, from: Int64, to end: Int, stalling: Bool) {
        do {
            let bytes = try #require(part.body.heldBytes)
            let sink = try engine.openChunk(
                try UploadID(try #require(upload.uploadID)), index: part.index,
                descriptor: ChunkDescriptor(length: Int(part.length), crc32c: part.crc32c, sha256: part.sha256),
                owner: ClientIdentity(ReceiverRouter.loopbackClient), from: from > 0 ? Int(from) : nil)
            try sink.write(Array(bytes[Int(from)..<end]))
            if stalling {
                stalled.withLock { $0.append(sink) }
            } else {
                #expect(sink.interrupted())
            }
        } catch {
            Issue.record("the test's cut failed: \(error)")
        }
    }
}

/// `ChunkedUploader` against the real receiver, whose chunk requests are cut part way: the run retry asks what the
/// receiver holds, continues the chunk from its received prefix (`docs/PROTOCOL.md` 3.2.2), counts only what each
/// attempt carries, and keeps going while the cuts let bytes through.
@Suite(.serialized) struct ChunkedUploaderContinuationTests {
    static let partSize = 16 << 10
    /// Four parts, the last 5,000 bytes.
    static let size = 3 * partSize + 5000

    static func uploader(_ fixture: NativeUploadFixture, _ backend: CuttingNativeBackend, waitLimit: Double = 120)
        throws -> ChunkedUploader
    {
        var configuration = UploadConfiguration(parallel: 2, initialBackoff: 0.001, maximumBackoff: 0.004)
        configuration.partSize = Self.partSize
        configuration.connectionWaitLimit = waitLimit
        configuration.connectionBackoffLimit = 0.004
        return ChunkedUploader(
            target: .init(
                file: FilePath(fixture.upload.file), destination: fixture.destination, protocolName: "native"),
            backend: backend, snapshots: try fixture.upload.store(),
            snapshotKey: SnapshotKey.derive(
                canonicalPath: FilePath(fixture.upload.file), destination: fixture.destination),
            configuration: configuration,
            breaker: UploadCircuitBreaker(configuration: UploadFixture.lenientBreaker))
    }

    @Test func aLonePartCutPartWayIsContinuedFromItsPrefixAndCountsOnlyWhatEachAttemptCarries() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 81)
        let fixture = try NativeUploadFixture(bytes: content)
        let native = try await NativeBackend.discover(creationURL: fixture.destination, client: fixture.client)
        #expect(native.server.resumesChunks)
        let backend = CuttingNativeBackend(inner: native, engine: fixture.server.engine, index: 1, cuts: [6000])
        let outcome = try await Self.uploader(fixture, backend).run { _ in }
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        // The lone part went as a run of one (a single-chunk request would have no continuation), then from 6000.
        #expect(backend.starts.withLock { $0 } == [0, 6000])
        // The cut attempt counts the chunk it carried, the continuation only the rest.
        #expect(outcome.bytesSent == Int64(Self.size + Self.partSize - 6000))
        #expect(fixture.server.engine.partialCount == 0)
    }

    @Test func cutsThatKeepLettingBytesThroughRestartTheRetriesUntilTheChunkIsIn() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 82)
        let fixture = try NativeUploadFixture(bytes: content)
        let native = try await NativeBackend.discover(creationURL: fixture.destination, client: fixture.client)
        let cuts = [3000, 6000, 9000, 12_000, 15_000]
        let backend = CuttingNativeBackend(
            inner: native, engine: fixture.server.engine, index: 0, cuts: cuts, delay: .milliseconds(40))
        // Five cuts of 40 ms each outlast the 0.1 s a path may fail; each lets 3,000 bytes more through.
        let outcome = try await Self.uploader(fixture, backend, waitLimit: 0.1).run { _ in }
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        #expect(backend.starts.withLock { $0 } == [0] + cuts.map(Int64.init))
    }

    @Test func aRequestFrozenPartWayIsTakenOverAndContinuedFromWhatItReceived() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 84)
        let fixture = try NativeUploadFixture(bytes: content)
        let native = try await NativeBackend.discover(creationURL: fixture.destination, client: fixture.client)
        // The cut request stays open on the receiver: the holdings list what it wrote so far; the continuation
        // waits for the chunk's claim, takes it over, and the frozen request hands its prefix over.
        let backend = CuttingNativeBackend(
            inner: native, engine: fixture.server.engine, index: 1, cuts: [7000], stalls: true)
        let outcome = try await Self.uploader(fixture, backend).run { _ in }
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        #expect(backend.starts.withLock { $0 } == [0, 7000])
        #expect(outcome.bytesSent == Int64(Self.size + Self.partSize - 7000))
        let frozen = try #require(backend.stalled.withLock { $0.first })
        // The frozen request can write nothing more: the region is the continuation's.
        #expect(throws: ReceiverError.self) { try frozen.write([1]) }
    }

    @Test func aContinuationRefusedForNamingTooFewBytesGoesOnFromWhatTheReceiverHolds() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 85)
        let fixture = try NativeUploadFixture(bytes: content)
        let native = try await NativeBackend.discover(creationURL: fixture.destination, client: fixture.client)
        let backend = CuttingNativeBackend(
            inner: native, engine: fixture.server.engine, index: 1, cuts: [4000], grows: 5000)
        let outcome = try await Self.uploader(fixture, backend).run { _ in }
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        // From 4000 refused before its body (the receiver holds 9000), then from 9000.
        #expect(backend.starts.withLock { $0 } == [0, 4000, 9000])
        #expect(fixture.server.engine.partialCount == 0)
    }

    @Test func aCutWithoutBytesThroughStillEndsWhenThePathFailsTooLong() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 83)
        let fixture = try NativeUploadFixture(bytes: content)
        let native = try await NativeBackend.discover(creationURL: fixture.destination, client: fixture.client)
        // Every cut lets nothing more through: the same 3,000 bytes each time, no progress, so no fresh retries.
        let backend = CuttingNativeBackend(
            inner: native, engine: fixture.server.engine, index: 0, cuts: Array(repeating: 3000, count: 1000),
            delay: .milliseconds(20))
        await #expect(throws: UploaderError.self) {
            _ = try await Self.uploader(fixture, backend, waitLimit: 0.3).run { _ in }
        }
        #expect(backend.starts.withLock { $0 }.count < 100)
    }
}

/// `RunProgress` alone: where each attempt starts, what a refusal changes, and what counts as progress.
@Suite struct RunProgressContinuationTests {
    static func parts(_ count: Int) -> [PartToSend] {
        (0..<count).map { index in
            PartToSend(
                index: index, offset: Int64(index * 100), body: .bytes([UInt8](repeating: 0, count: 100)), length: 100,
                sha256: SHA256.hash([UInt8(index)]), crc32c: 0, link: SHA256.hash([]), via: InMemoryBackend())
        }
    }

    @Test func aHeldPrefixStartsTheNextAttemptOnceAndOnlyWhenTheDestinationContinues() {
        let progress = RunProgress(Self.parts(3))
        let first = progress.nextAttempt(limit: 2)
        #expect(first.parts.map(\.index) == [0, 1, 2])
        #expect(first.from == 0)
        let holdings = RunHoldings(progress: .chunks([0], complete: false), prefixes: [1: 40, 2: 10])
        let learned = progress.acknowledgeHeld(holdings, continues: true)
        #expect(learned.bytes == 100)
        #expect(learned.gained)
        let second = progress.nextAttempt(limit: 2)
        #expect(second.parts.map(\.index) == [1, 2])
        #expect(second.from == 40)
        // Told nothing more, the next attempt starts whole.
        #expect(progress.nextAttempt(limit: 2).from == 0)
        // The same prefix again is no progress; a longer one is.
        #expect(!progress.acknowledgeHeld(holdings, continues: true).gained)
        let longer = RunHoldings(progress: .chunks([0], complete: false), prefixes: [1: 70])
        #expect(progress.acknowledgeHeld(longer, continues: true).gained)
        // A destination that keeps no prefix: nothing to start from.
        #expect(!progress.acknowledgeHeld(longer, continues: false).gained)
        #expect(progress.nextAttempt(limit: 2).from == 0)
        // Part 1 carried 100, then 60, 100, 100 (the last three attempts); part 2 four times whole.
        #expect(progress.carried(of: 1, length: 100) == 360)
        #expect(progress.carried(of: 2, length: 100) == 400)
    }

    @Test func aRefusalNamingAnotherPrefixIsFollowedOnceThenTheChunkGoesWhole() {
        let progress = RunProgress(Self.parts(2))
        _ = progress.nextAttempt(limit: 2)
        _ = progress.acknowledgeHeld(
            RunHoldings(progress: .chunks([], complete: false), prefixes: [0: 30]), continues: true)
        #expect(progress.nextAttempt(limit: 2).from == 30)
        progress.prefixRefused(55)
        #expect(!progress.previousAttemptUnanswered)
        #expect(progress.nextAttempt(limit: 2).from == 55)
        progress.prefixRefused(60)
        #expect(progress.nextAttempt(limit: 2).from == 0)
        // A refusal that names nothing (0) or the whole part sends it whole.
        let other = RunProgress(Self.parts(1))
        _ = other.nextAttempt(limit: 1)
        other.prefixRefused(100)
        #expect(other.nextAttempt(limit: 1).from == 0)
    }

    @Test func anAttemptThatSentNothingGivesBackItsBytesAndItsStart() {
        let progress = RunProgress(Self.parts(2))
        _ = progress.nextAttempt(limit: 2)
        _ = progress.acknowledgeHeld(
            RunHoldings(progress: .chunks([], complete: false), prefixes: [0: 30]), continues: true)
        let attempt = progress.nextAttempt(limit: 2)
        #expect(attempt.from == 30)
        progress.unsent(attempt.parts, from: attempt.from)
        #expect(progress.carried(of: 0, length: 100) == 100)
        #expect(progress.nextAttempt(limit: 2).from == 30)
        #expect(progress.carried(of: 0, length: 100) == 170)
    }
}
