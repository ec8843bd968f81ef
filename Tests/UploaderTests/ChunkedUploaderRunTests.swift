import AetherIO
import AetherReceiver
import AetherScheduling
import FoundationEssentials
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// A backend that takes runs of at most `maximum` parts, records every run it is asked to send, and fails one run part
/// way: the first `prefix` parts reach the destination, then the connection drops (`throwing`: nothing is reported,
/// as when a reset cuts an IETF or tus append) or the answer names the stored parts (`reporting`: a native problem
/// answer with its run receipt).
final class FaultyRunBackend<Inner: RunSendingBackend>: RunSendingBackend {
    enum Fault: Sendable {
        case throwing
        case reporting
    }

    let inner: Inner
    let maximum: Int
    let fault: Fault
    let prefix: Int
    let runs = Mutex<[[Int]]>([])
    let faulted = Mutex(false)

    init(inner: Inner, maximum: Int, fault: Fault, prefix: Int) {
        self.inner = inner
        self.maximum = maximum
        self.fault = fault
        self.prefix = prefix
    }

    var capabilities: BackendCapabilities { inner.capabilities }
    var features: BackendFeatures { BackendFeatures(runs: self) }
    func maximumRunParts(of upload: RemoteUpload) -> Int { min(maximum, inner.maximumRunParts(of: upload)) }
    func create(_ description: UploadDescription) async throws(TransportError) -> RemoteUpload {
        try await inner.create(description)
    }
    func progress(of upload: RemoteUpload) async throws(TransportError) -> RemoteProgress {
        try await inner.progress(of: upload)
    }
    func send(_ part: UploadPart, to upload: RemoteUpload) async throws(TransportError) -> PartReceipt {
        runs.withLock { $0.append([part.index]) }
        return try await inner.send(part, to: upload)
    }
    func send(run parts: [UploadPart], to upload: RemoteUpload) async throws(TransportError) -> RunOutcome {
        runs.withLock { $0.append(parts.map(\.index)) }
        let fails =
            parts.count > prefix
            && faulted.withLock { done in
                defer { done = true }
                return !done
            }
        guard fails else { return try await inner.send(run: parts, to: upload) }
        let stored = try await inner.send(run: Array(parts.prefix(prefix)), to: upload)
        let dropped = TransportError(.connectionClosed, "the test cut the run after \(prefix) parts")
        switch fault {
        case .throwing: throw dropped
        case .reporting: return RunOutcome(receipts: stored.receipts, stoppedBy: dropped)
        }
    }
    func complete(_ upload: RemoteUpload, summary: CompletionSummary) async throws(TransportError) -> UploadReceipt {
        try await inner.complete(upload, summary: summary)
    }
    func abort(_ upload: RemoteUpload) async throws(TransportError) { try await inner.abort(upload) }
}

/// `ChunkedUploader` sending runs to the real receiver over IETF, tus and native: each request carries up to k
/// consecutive parts, a run cut part way is finished (only its unacknowledged parts are sent again where the answer
/// says which), and the stored object is the file.
@Suite(.serialized) struct ChunkedUploaderRunTests {
    // 300,000 bytes in 16 KiB parts: 19 parts, the last 5,088 bytes.
    static let size = 300_000
    static let partCount = 19

    static func uploader<B: RunSendingBackend>(_ fixture: NativeUploadFixture, _ backend: B, mode: TransportMode)
        throws -> ChunkedUploader
    {
        var configuration = UploadConfiguration(parallel: 2, initialBackoff: 0.001, maximumBackoff: 0.004)
        configuration.partSize = 16 << 10
        return ChunkedUploader(
            target: .init(
                file: FilePath(fixture.upload.file), destination: fixture.destination, mode: mode),
            backend: backend, snapshots: try fixture.upload.store(),
            snapshotKey: SnapshotKey.derive(
                canonicalPath: FilePath(fixture.upload.file), destination: fixture.destination),
            configuration: configuration,
            breaker: UploadCircuitBreaker(configuration: UploadFixture.lenientBreaker))
    }

    /// Runs the upload; returns the outcome and the request reports.
    static func run(_ uploader: ChunkedUploader) async throws -> (UploadOutcome, [RequestReport], Int) {
        let requests = Mutex<[RequestReport]>([])
        let retries = Mutex(0)
        let outcome = try await uploader.run { event in
            switch event {
            case .requestAcknowledged(let report): requests.withLock { $0.append(report) }
            case .retry: retries.withLock { $0 += 1 }
            default: break
            }
        }
        return (outcome, requests.withLock { $0 }, retries.withLock { $0 })
    }

    /// Every run is consecutive and at most `maximum` long, and together they cover every part.
    static func checkRuns(_ runs: [[Int]], maximum: Int) {
        for run in runs {
            #expect(run.count <= maximum, "run \(run)")
            #expect(run == Array((run.first ?? 0)..<((run.first ?? 0) + run.count)), "run \(run)")
        }
        #expect(Set(runs.joined()) == Set(0..<partCount))
        #expect(runs.contains { $0.count > 1 }, "runs: \(runs)")
    }

    @Test func ietfRunsCutByAResetSendOnlyThePartsPastTheServersOffsetAgain() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 71)
        let fixture = try NativeUploadFixture(bytes: content)
        let ietf = try await IETFResumableBackend.discover(creationURL: fixture.destination, client: fixture.client)
        let backend = FaultyRunBackend(inner: ietf, maximum: 4, fault: .throwing, prefix: 2)
        let (outcome, requests, retries) = try await Self.run(try Self.uploader(fixture, backend, mode: .ietfResumable))
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        let runs = backend.runs.withLock { $0 }
        Self.checkRuns(runs, maximum: 4)
        // Nothing was reported for the cut run: the server's offset (HEAD) says which of its parts are stored, and
        // the next request starts after them.
        // The next run starts at the server's offset; how long it is, the scheduler decides again from the time
        // measured so far (a loaded machine was seen to send one part of the two, then the other in a later run).
        let cut = try #require(runs.first { $0.count > 2 })
        let again = try #require(runs.first { $0.first == cut[2] })
        #expect(Array(cut[2...]).starts(with: again) || again.starts(with: cut[2...]), "cut \(cut), again \(again)")
        #expect(runs.filter { $0.contains(cut[0]) || $0.contains(cut[1]) }.count == 1, "runs: \(runs)")
        #expect(retries >= 1)
        // The two parts the cut request stored are acknowledged by the server's offset, not by a request.
        #expect(requests.map(\.parts).reduce(0, +) == Self.partCount - 2)
        #expect(
            requests.allSatisfy { $0.bytes == Int64($0.parts) * (16 << 10) || $0.index + $0.parts == Self.partCount })
    }

    @Test func nativeRunsCutPartWaySendOnlyTheUnacknowledgedPartsAgain() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 72)
        let fixture = try NativeUploadFixture(bytes: content)
        let native = try await NativeBackend.discover(creationURL: fixture.destination, client: fixture.client)
        #expect(native.server.maximumRun == ReceiverLimits().maximumRunChunks)
        let backend = FaultyRunBackend(inner: native, maximum: 5, fault: .reporting, prefix: 2)
        let (outcome, requests, retries) = try await Self.run(
            try Self.uploader(fixture, backend, mode: .native))
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        let runs = backend.runs.withLock { $0 }
        Self.checkRuns(runs, maximum: 5)
        // The cut run's first two parts were acknowledged; the next request for it starts at its third part.
        // The next run starts at the server's offset; how long it is, the scheduler decides again from the time
        // measured so far (a loaded machine was seen to send one part of the two, then the other in a later run).
        let cut = try #require(runs.first { $0.count > 2 })
        let again = try #require(runs.first { $0.first == cut[2] })
        #expect(Array(cut[2...]).starts(with: again) || again.starts(with: cut[2...]), "cut \(cut), again \(again)")
        #expect(runs.filter { $0.contains(cut[0]) || $0.contains(cut[1]) }.count == 1, "runs: \(runs)")
        #expect(retries >= 1)
        #expect(Set(requests.map(\.index)).contains(cut[0]))
        #expect(outcome.partsSent == Self.partCount)
    }

    @Test func nativeRunsCutByAResetAskTheReceiverWhichChunksItHolds() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 75)
        let fixture = try NativeUploadFixture(bytes: content)
        let native = try await NativeBackend.discover(creationURL: fixture.destination, client: fixture.client)
        let backend = FaultyRunBackend(inner: native, maximum: 5, fault: .throwing, prefix: 3)
        let (outcome, _, retries) = try await Self.run(try Self.uploader(fixture, backend, mode: .native))
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        let runs = backend.runs.withLock { $0 }
        Self.checkRuns(runs, maximum: 5)
        let cut = try #require(runs.first { $0.count > 3 })
        // The parts the receiver stored before the reset are never sent again; the rest go once more, in runs of
        // the length planned after the reset (the interruption it was shortens them).
        let rest = Set(cut[3...])
        let again = runs.drop { $0 != cut }.dropFirst().flatMap { $0.filter(rest.contains) }
        #expect(again == Array(cut[3...]), "runs: \(runs)")
        #expect(runs.filter { $0.contains(cut[0]) }.count == 1)
        #expect(runs.filter { $0.contains(cut[2]) }.count == 1)
        #expect(retries >= 1)
    }

    @Test func tusRunsWithoutConcatenationAppendSeveralPartsPerPatch() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 73)
        let fixture = try NativeUploadFixture(bytes: content)
        var options = TusBackendOptions()
        options.useConcatenation = false
        let tus = try await TusBackend.discover(
            creationURL: fixture.destination, client: fixture.client, options: options)
        let backend = FaultyRunBackend(inner: tus, maximum: 6, fault: .throwing, prefix: 3)
        let (outcome, requests, _) = try await Self.run(try Self.uploader(fixture, backend, mode: .tus))
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        Self.checkRuns(backend.runs.withLock { $0 }, maximum: 6)
        #expect(requests.contains { $0.parts > 1 })
    }

    @Test func aFixedChunkSizeSendsOnePartPerRequest() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 76)
        let fixture = try NativeUploadFixture(bytes: content)
        let ietf = try await IETFResumableBackend.discover(creationURL: fixture.destination, client: fixture.client)
        let backend = FaultyRunBackend(inner: ietf, maximum: 4, fault: .throwing, prefix: 100)
        let uploader = ChunkedUploader(
            target: .init(file: FilePath(fixture.upload.file), destination: fixture.destination, mode: .ietfResumable),
            backend: backend, snapshots: try fixture.upload.store(),
            snapshotKey: SnapshotKey.derive(
                canonicalPath: FilePath(fixture.upload.file), destination: fixture.destination),
            configuration: UploadConfiguration(chunkSize: 16 << 10, parallel: 1))
        let (outcome, requests, _) = try await Self.run(uploader)
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        #expect(backend.runs.withLock { $0 }.allSatisfy { $0.count == 1 })
        #expect(requests.count == Self.partCount)
    }

    @Test func withAdaptiveChunkingOffEveryRequestCarriesOnePart() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 74)
        let fixture = try NativeUploadFixture(bytes: content)
        let ietf = try await IETFResumableBackend.discover(creationURL: fixture.destination, client: fixture.client)
        let backend = FaultyRunBackend(inner: ietf, maximum: 4, fault: .throwing, prefix: 100)
        var flags = FeatureFlags.defaults
        flags.adaptiveChunking = false
        let uploader = ChunkedUploader(
            target: .init(file: FilePath(fixture.upload.file), destination: fixture.destination, mode: .ietfResumable),
            backend: backend, snapshots: try fixture.upload.store(),
            snapshotKey: SnapshotKey.derive(
                canonicalPath: FilePath(fixture.upload.file), destination: fixture.destination),
            configuration: UploadConfiguration(parallel: 1, flags: flags).withPartSize(16 << 10))
        let (outcome, requests, _) = try await Self.run(uploader)
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        #expect(backend.runs.withLock { $0 }.allSatisfy { $0.count == 1 })
        #expect(requests.count == Self.partCount)
    }
}

extension UploadConfiguration {
    func withPartSize(_ bytes: Int) -> UploadConfiguration {
        var copy = self
        copy.partSize = bytes
        return copy
    }
}
