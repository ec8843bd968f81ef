import AetherIO
import AetherReceiver
import AetherScheduling
import FoundationEssentials
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// The native backend with cuts: each request carrying chunk `index` while `cuts` holds positions takes the chunks
/// before it in the request whole into the receiver's engine (the receiver stores a run's chunks as they arrive), then
/// the chunk's bytes up to the next position, and cuts them there (the sink is interrupted, as when the connection
/// drops); the request throws `.connectionClosed`. Every request is recorded, and where each that carried chunk
/// `index` started in it. With `stalls`, the cut request is not interrupted but left open (a connection that froze:
/// the receiver never sees it end); with `grows`, the first continuation finds the receiver holding that many bytes
/// more than it named (another request went on meanwhile), so the receiver refuses it with what it holds. `onCut`
/// runs at each cut, before the request throws.
final class CuttingNativeBackend: RunSendingBackend, @unchecked Sendable {
    // @unchecked: the fields are set once in init; the mutable state sits behind Mutexes.
    /// One request: its first part, how many parts it carried and where it started in the first.
    struct Request: Equatable {
        let first: Int
        let count: Int
        let from: Int64
    }

    let inner: NativeBackend
    let engine: UploadEngine
    let index: Int
    let delay: Duration
    let stalls: Bool
    let onCut: (@Sendable () -> Void)?
    let cuts: Mutex<[Int]>
    let grows: Mutex<Int?>
    let requests = Mutex<[Request]>([])
    /// Where each request carrying chunk `index` started in it (0: whole).
    let starts = Mutex<[Int64]>([])
    /// The requests left open by `stalls`.
    let stalled = Mutex<[ChunkSink]>([])

    init(
        inner: NativeBackend, engine: UploadEngine, index: Int, cuts: [Int], delay: Duration = .zero,
        stalls: Bool = false, grows: Int? = nil, onCut: (@Sendable () -> Void)? = nil
    ) {
        self.inner = inner
        self.engine = engine
        self.index = index
        self.cuts = Mutex(cuts)
        self.delay = delay
        self.stalls = stalls
        self.grows = Mutex(grows)
        self.onCut = onCut
    }

    var capabilities: BackendCapabilities { inner.capabilities }
    var features: BackendFeatures { BackendFeatures(runs: self) }
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
        try await cutting([part], from: 0, upload)
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

    /// The bytes the recorded requests carried, each its parts less where it started.
    func carried(partSize: Int, size: Int) -> Int64 {
        requests.withLock { requests in
            requests.reduce(Int64(0)) { total, request in
                let end = min(size, (request.first + request.count) * partSize)
                return total + Int64(end - request.first * partSize) - request.from
            }
        }
    }

    private func cutting(_ parts: [UploadPart], from: Int64, _ upload: RemoteUpload) async throws(TransportError) {
        guard let first = parts.first else { return }
        requests.withLock { $0.append(Request(first: first.index, count: parts.count, from: from)) }
        guard let position = parts.firstIndex(where: { $0.index == index }) else { return }
        let start = position == 0 ? from : 0
        starts.withLock { $0.append(start) }
        if start > 0,
            let more = grows.withLock({ value in
                defer { value = nil }; return value
            })
        {
            // Another request continues the prefix by `more` bytes and is cut: the continuation names too few.
            write(parts[position], upload, from: start, to: Int(start) + more, ending: .cut)
            return
        }
        guard let cut = cuts.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return }
        for (offset, earlier) in parts[..<position].enumerated() {
            let begin = offset == 0 ? from : 0
            write(earlier, upload, from: begin, to: Int(earlier.length), ending: .stored)
        }
        write(parts[position], upload, from: start, to: cut, ending: stalls ? .stall : .cut)
        onCut?()
        try? await Task.sleep(for: delay)
        throw TransportError(.connectionClosed, "the test cut chunk \(index) at byte \(cut)")
    }

    enum Ending { case stored, cut, stall }

    /// Writes bytes `from..<to` of `part` into the receiver as one request, then stores it (all its bytes), cuts it,
    /// or leaves it open.
    private func write(_ part: UploadPart, _ upload: RemoteUpload, from: Int64, to end: Int, ending: Ending) {
        do {
            let bytes = try #require(part.body.heldBytes)
            let sink = try engine.openChunk(
                try UploadID(try #require(upload.uploadID)), index: part.index,
                descriptor: ChunkDescriptor(length: Int(part.length), crc32c: part.crc32c, sha256: part.sha256),
                owner: ClientIdentity(ReceiverRouter.loopbackClient), from: from > 0 ? Int(from) : nil)
            try sink.write(Array(bytes[Int(from)..<end]))
            switch ending {
            case .stored: #expect(try sink.finish() == .stored)
            case .cut: #expect(sink.interrupted())
            case .stall: stalled.withLock { $0.append(sink) }
            }
        } catch {
            Issue.record("the test's request failed: \(error)")
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

    static func uploader(
        _ fixture: NativeUploadFixture, _ backend: CuttingNativeBackend, waitLimit: Double = 120,
        scheduler: FusionScheduler = FusionScheduler()
    ) throws -> ChunkedUploader {
        var configuration = UploadConfiguration(parallel: 2, initialBackoff: 0.001, maximumBackoff: 0.004)
        configuration.partSize = Self.partSize
        configuration.connectionWaitLimit = waitLimit
        configuration.connectionBackoffLimit = 0.004
        return ChunkedUploader(
            target: .init(
                file: FilePath(fixture.upload.file), destination: fixture.destination, mode: .native),
            backend: backend, snapshots: try fixture.upload.store(),
            snapshotKey: SnapshotKey.derive(
                canonicalPath: FilePath(fixture.upload.file), destination: fixture.destination),
            configuration: configuration, scheduler: scheduler,
            breaker: UploadCircuitBreaker(configuration: UploadFixture.lenientBreaker))
    }

    @Test func aPartCutPartWayIsContinuedFromItsPrefixAndCountsOnlyWhatEachAttemptCarries() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 81)
        let fixture = try NativeUploadFixture(bytes: content)
        let native = try await NativeBackend.discover(creationURL: fixture.destination, client: fixture.client)
        #expect(native.server.resumesChunks)
        let backend = CuttingNativeBackend(inner: native, engine: fixture.server.engine, index: 1, cuts: [6000])
        let outcome = try await Self.uploader(fixture, backend).run { _ in }
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        // Part 1 went whole (cut at 6000), then from 6000 on, first in a continuation run: a single-chunk request
        // has no continuation.
        #expect(backend.starts.withLock { $0 } == [0, 6000])
        let continuation = try #require(backend.requests.withLock { $0 }.first { $0.from > 0 })
        #expect(continuation.first == 1)
        // Each request counts what it carried: a continuation only the rest of its first part.
        #expect(outcome.bytesSent == backend.carried(partSize: Self.partSize, size: Self.size))
        #expect(outcome.bytesSent < 2 * Int64(Self.size) - 6000)
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
        #expect(outcome.bytesSent == backend.carried(partSize: Self.partSize, size: Self.size))
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

    /// After a cut, the retry's run length is planned again with the interruption it was (merged with the link
    /// planner): the continuation carries the part from its prefix in a request of the length planned now. The cut
    /// tells the scheduler the link is slow (the measurements a slow link gives), so the planner keeps the request to
    /// what arrives before the next interruption expected: one part.
    @Test func theRetryOfACutRunIsPlannedAgainAndContinuesFromThePrefix() async throws {
        let size = 8 * Self.partSize
        let content = UploadFixture.seeded(size, seed: 86)
        let fixture = try NativeUploadFixture(bytes: content)
        let native = try await NativeBackend.discover(creationURL: fixture.destination, client: fixture.client)
        let scheduler = FusionScheduler()
        let backend = CuttingNativeBackend(
            inner: native, engine: fixture.server.engine, index: 2, cuts: [6000],
            onCut: {
                let now = SystemClock().monotonicSeconds()
                for step in 0..<32 {
                    scheduler.record(
                        BandwidthMeasurement(bytes: 2000, duration: 1, timestamp: now - 32 + Double(step)))
                }
            })
        let uploader = try Self.uploader(fixture, backend, scheduler: scheduler)
        let outcome = try await uploader.run { _ in }
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        let requests = backend.requests.withLock { $0 }
        let cut = try #require(requests.first { $0.first <= 2 && $0.first + $0.count > 2 })
        #expect(cut.count >= 4, "requests: \(requests)")
        let continuation = try #require(requests.first { $0.from > 0 }, "requests: \(requests)")
        #expect(continuation == .init(first: 2, count: 1, from: 6000), "requests: \(requests)")
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
