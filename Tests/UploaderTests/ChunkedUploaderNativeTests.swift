import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherScheduling
import AetherSecurity
import FoundationEssentials
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// What a watched native backend saw: chunk sends that reached the receiver, chunks withheld, parity shards, the
/// bytes of chunk bodies as sent (after any content coding) and their codings.
final class NativeWire: Sendable {
    struct Seen {
        var chunks: [Int] = []
        var withheld: [Int] = []
        var parity: [String] = []
        var chunkBodyBytes = 0
        var codings: [String] = []
        /// The chunks of each spot check sent.
        var spotChecks: [[Int]] = []
    }
    let seen = Mutex(Seen())
    var snapshot: Seen { seen.withLock { $0 } }
}

/// A native backend that can withhold chunks (answering as if they were stored, without sending them) and records
/// what it sends; every variant (`with(options:)`) shares the record.
struct WatchedNativeBackend: NativeFeaturesBackend, ChainReportingBackend {
    let inner: NativeBackend
    let wire: NativeWire
    let withhold: Set<Int>
    /// Runs when the upload is created (after the dedup pre-pass read the file).
    var onCreate: (@Sendable () -> Void)? = nil
    /// The possession answer is lost after the receiver took the proof (a reset under the answer).
    var losesPossessionAnswer = false
    /// Spot-check answers are replaced by other values of the same shape (what a receiver without the bytes sends).
    var forgesSpotChecks = false
    /// Runs before each status request (the spot checks ask one as the receiver's acknowledgement).
    var onStatus: (@Sendable (RemoteUpload) -> Void)? = nil

    var capabilities: BackendCapabilities { inner.capabilities }
    var features: BackendFeatures { BackendFeatures(native: self, chain: self) }
    var server: AetherCapabilities { inner.server }
    var options: NativeBackendOptions { inner.options }

    func with(options: NativeBackendOptions) throws(TransportError) -> WatchedNativeBackend {
        WatchedNativeBackend(
            inner: try inner.with(options: options), wire: wire, withhold: withhold, onCreate: onCreate,
            losesPossessionAnswer: losesPossessionAnswer, forgesSpotChecks: forgesSpotChecks, onStatus: onStatus)
    }
    func create(_ description: UploadDescription) async throws(TransportError) -> RemoteUpload {
        try await inner.create(description)
    }
    func createUpload(_ description: UploadDescription) async throws(TransportError) -> (
        upload: RemoteUpload, status: NativeStatusDocument
    ) {
        onCreate?()
        return try await inner.createUpload(description)
    }
    func chainState(of upload: RemoteUpload) async throws(TransportError) -> ChainState? {
        try await inner.chainState(of: upload)
    }

    func status(of upload: RemoteUpload) async throws(TransportError) -> NativeStatusDocument {
        onStatus?(upload)
        return try await inner.status(of: upload)
    }
    func progress(of upload: RemoteUpload) async throws(TransportError) -> RemoteProgress {
        try await inner.progress(of: upload)
    }
    func send(_ part: UploadPart, to upload: RemoteUpload) async throws(TransportError) -> PartReceipt {
        if withhold.contains(part.index) {
            wire.seen.withLock { $0.withheld.append(part.index) }
            return PartReceipt(index: part.index, length: part.length, checksumCRC32C: part.crc32c)
        }
        let receipt = try await inner.send(part, to: upload)
        wire.seen.withLock { $0.chunks.append(part.index) }
        return receipt
    }
    func send(_ shard: ParityShard, to upload: RemoteUpload) async throws(TransportError) -> AetherReceiptHeader {
        let receipt = try await inner.send(shard, to: upload)
        wire.seen.withLock { $0.parity.append("\(shard.group)/\(shard.shard)") }
        return receipt
    }
    func provePossession(
        _ upload: RemoteUpload, challenge: [UInt8], prover: ProofOfPossessionProver, summary: CompletionSummary
    ) async throws(TransportError) -> UploadReceipt? {
        let receipt = try await inner.provePossession(upload, challenge: challenge, prover: prover, summary: summary)
        if losesPossessionAnswer { throw TransportError(.connectionClosed, "the possession answer was cut") }
        return receipt
    }
    func challenge(
        _ upload: RemoteUpload, _ challenge: ByzantineChallenge, chunkHashes: [Digest32], requireProofs: Bool
    ) async throws(TransportError) -> [Digest32] {
        let macs = try await inner.challenge(upload, challenge, chunkHashes: chunkHashes, requireProofs: requireProofs)
        wire.seen.withLock { $0.spotChecks.append(challenge.items.map(\.index)) }
        return forgesSpotChecks ? macs.map { SHA256.hash($0.bytes) } : macs
    }
    func complete(_ upload: RemoteUpload, summary: CompletionSummary) async throws(TransportError) -> UploadReceipt {
        try await inner.complete(upload, summary: summary)
    }
    func abort(_ upload: RemoteUpload) async throws(TransportError) { try await inner.abort(upload) }
}

/// A real receiver (`ReceiverServer`, 127.0.0.1) over a temporary store, and a file to upload to it.
final class NativeUploadFixture: @unchecked Sendable {
    // @unchecked: every field is set once in init.
    let upload: UploadFixture
    let store: FilePath
    let server: ReceiverServer
    let client: HTTPClient
    let wire = NativeWire()

    init(bytes: [UInt8]) throws {
        upload = try UploadFixture(bytes: bytes)
        let store = upload.directory + "/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        self.store = FilePath(store)
        server = try ReceiverServer(
            ReceiverServer.Options(directory: self.store, limits: ReceiverLimits(minimumChunkSize: 16 * 1024)),
            logSink: { _ in })
        client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
    }

    deinit {
        server.stop()
        client.shutDown()
        upload.clean()
    }

    var destination: String { server.url + "/uploads" }

    /// The detected native backend, its requests passing through a counter of chunk bodies and their codings;
    /// `rewrite` may change each answer before the backend reads it (a receiver that lies).
    func backend(
        withholding withhold: Set<Int> = [], wire given: NativeWire? = nil,
        rewrite: (@Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse)? = nil
    ) async throws
        -> WatchedNativeBackend
    {
        let detected = try await BackendDetector(client: client).detect(destination)
        let found = try #require(detected.backend as? NativeBackend)
        let client = self.client
        let wire = given ?? self.wire
        let counted = try NativeBackend(
            creationURL: found.creationURL, server: found.server, options: found.options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in
                if request.method == "PUT", request.url.contains("/chunks/") {
                    wire.seen.withLock {
                        $0.chunkBodyBytes += Int(request.body.length ?? 0)
                        if let coding = request.headers["Content-Encoding"] { $0.codings.append(coding) }
                    }
                }
                let response = try await client.send(request)
                return rewrite?(request, response) ?? response
            })
        return WatchedNativeBackend(inner: counted, wire: wire, withhold: withhold)
    }

    func uploader(
        _ backend: WatchedNativeBackend, parity: Bool = false, flags: FeatureFlags = .defaults
    ) throws -> ChunkedUploader {
        ChunkedUploader(
            target: .init(file: FilePath(upload.file), destination: destination, mode: .native),
            backend: backend, snapshots: try upload.store(),
            snapshotKey: SnapshotKey.derive(canonicalPath: FilePath(upload.file), destination: destination),
            configuration: UploadConfiguration(
                chunkSize: 16 << 10, parallel: 4, parity: parity, initialBackoff: 0.001, maximumBackoff: 0.004,
                flags: flags),
            breaker: UploadCircuitBreaker(configuration: UploadFixture.lenientBreaker))
    }

    /// The object the receiver stored for the upload at `location`.
    func object(at location: String) throws -> [UInt8]? {
        guard let last = location.split(separator: "/").last else { return nil }
        let path = try DirectoryBlobStore(root: store).path(of: .object(try UploadID(last))).description
        return FileManager.default.contents(atPath: path).map { Array($0) }
    }

    static func text(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        let words = ["aether ", "receiver ", "chunk ", "merkle ", "parity ", "zstd "]
        var out: [UInt8] = []
        while out.count < count { out += Array(words[Int(generator.next() % UInt64(words.count))].utf8) }
        return Array(out.prefix(count))
    }
}

/// `ChunkedUploader` against the real receiver over the native protocol: parity rebuilds a withheld chunk,
/// compressible chunks travel compressed, and a second upload of the same file is deduplicated.
@Suite(.serialized) struct ChunkedUploaderNativeTests {
    // 150,000 bytes in 16 KiB chunks: 10 chunks (the last 2,544 bytes), parity groups of 8 and a short group of 2.
    static let size = 150_000

    @Test func withParityForcedWithheldChunksAreRebuiltByTheReceiverAndTheUploadVerifies() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 21)
        let fixture = try NativeUploadFixture(bytes: content)
        let backend = try await fixture.backend(withholding: [3, 9])
        let outcome = try await fixture.uploader(backend, parity: true).run { _ in }
        let seen = fixture.wire.snapshot
        #expect(Set(seen.withheld) == [3, 9])
        #expect(Set(seen.chunks) == Set(0..<10).subtracting([3, 9]))
        // Both groups (the full one and the short last one) got parity, and it is what rebuilt the chunks.
        #expect(Set(seen.parity.map { $0.split(separator: "/")[0] }) == ["0", "1"])
        #expect(outcome.parityShardsSent == seen.parity.count)
        #expect(outcome.serverVerified.contains("merkle-root"))
        #expect(try fixture.object(at: outcome.receipt.location) == content)
    }

    @Test func withoutParityAWithheldChunkLeavesTheUploadIncomplete() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 22)
        let fixture = try NativeUploadFixture(bytes: content)
        let backend = try await fixture.backend(withholding: [9])
        // A clean link (no failed attempt) and no --parity: no shard is sent, so the receiver cannot rebuild. The spot
        // checks are off, so the completion meets the missing chunk whichever chunks a sample would have drawn.
        var flags = FeatureFlags.defaults
        flags.byzantineSampling = false
        let error = await #expect(throws: UploaderError.self) {
            _ = try await fixture.uploader(backend, flags: flags).run { _ in }
        }
        #expect(error?.code == .transportFailed)
        #expect(fixture.wire.snapshot.parity.isEmpty)
    }

    @Test func aCompressibleFileTravelsCompressedAndVerifies() async throws {
        let content = NativeUploadFixture.text(Self.size, seed: 23)
        let fixture = try NativeUploadFixture(bytes: content)
        let outcome = try await fixture.uploader(try await fixture.backend()).run { _ in }
        let seen = fixture.wire.snapshot
        #expect(seen.codings.contains("zstd"))
        #expect(seen.chunkBodyBytes < content.count)
        #expect(outcome.serverVerified.contains("sha256"))
        #expect(try fixture.object(at: outcome.receipt.location) == content)
    }

    @Test func withCompressionSwitchedOffEveryChunkTravelsAsIs() async throws {
        let content = NativeUploadFixture.text(Self.size, seed: 24)
        let fixture = try NativeUploadFixture(bytes: content)
        var flags = FeatureFlags.defaults
        flags.compression = false
        let outcome = try await fixture.uploader(try await fixture.backend(), flags: flags).run { _ in }
        let seen = fixture.wire.snapshot
        #expect(seen.codings.isEmpty)
        #expect(seen.chunkBodyBytes == content.count)
        #expect(try fixture.object(at: outcome.receipt.location) == content)
    }

    @Test func aSecondUploadOfTheSameFileIsDedupedWithoutSendingChunks() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 25)
        let fixture = try NativeUploadFixture(bytes: content)
        let first = try await fixture.uploader(try await fixture.backend()).run { _ in }
        #expect(fixture.wire.snapshot.chunks.count == 10)
        #expect(!first.serverVerified.contains("possession"))

        let secondWire = NativeWire()
        let second = try await fixture.uploader(try await fixture.backend(wire: secondWire)).run { _ in }
        #expect(secondWire.snapshot.chunks.isEmpty)
        #expect(secondWire.snapshot.chunkBodyBytes == 0)
        #expect(second.partsSent == 0)
        #expect(second.serverVerified.contains("possession"))
        #expect(second.receipt.location != first.receipt.location)
        #expect(second.sha256 == SHA256.hash(content))
        #expect(try fixture.object(at: second.receipt.location) == content)

        // With dedup switched off the same file is sent again chunk by chunk.
        let thirdWire = NativeWire()
        var flags = FeatureFlags.defaults
        flags.dedup = false
        let third = try await fixture.uploader(try await fixture.backend(wire: thirdWire), flags: flags).run { _ in }
        #expect(thirdWire.snapshot.chunks.count == 10)
        #expect(third.partsSent == 10)
    }

    /// The receiver takes the proof and completes the upload, but its answer is cut: the uploader asks for the
    /// completion (idempotent), gets the receipt, checks it, and sends no chunk. It used to fall back to sending the
    /// chunks, which met a complete upload and failed the command.
    @Test func aProofWhoseAnswerIsLostStillCompletesTheUploadWithoutSendingChunks() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 28)
        let fixture = try NativeUploadFixture(bytes: content)
        let first = try await fixture.uploader(try await fixture.backend()).run { _ in }
        let secondWire = NativeWire()
        var lossy = try await fixture.backend(wire: secondWire)
        lossy.losesPossessionAnswer = true
        let second = try await fixture.uploader(lossy).run { _ in }
        #expect(secondWire.snapshot.chunks.isEmpty)
        #expect(second.partsSent == 0)
        #expect(second.serverVerified.contains("possession"))
        #expect(second.receipt.location != first.receipt.location)
        #expect(try fixture.object(at: second.receipt.location) == content)
    }

    @Test func aFileRewrittenAfterTheDedupPrePassIsSentWithTheDigestsOfTheBytesReadThen() async throws {
        let content = UploadFixture.seeded(Self.size, seed: 27)
        let replacement = UploadFixture.seeded(Self.size, seed: 28)
        let fixture = try NativeUploadFixture(bytes: content)
        var backend = try await fixture.backend()
        let path = fixture.upload.file
        // Same size, same inode, a later modification time: the pre-pass's digests are not this file's.
        backend.onCreate = { try? Data(replacement).write(to: URL(fileURLWithPath: path)) }
        let retries = Mutex<[RetryReport]>([])
        await #expect(throws: UploaderError.self) {
            _ = try await fixture.uploader(backend).run { event in
                if case .retry(let report) = event { retries.withLock { $0.append(report) } }
            }
        }
        // Every chunk went with the digests of the bytes sent, so the receiver stored each one at once; only the
        // completion fails (the content id announced at creation is the old file's).
        #expect(Set(fixture.wire.snapshot.chunks) == Set(0..<10))
        #expect(retries.withLock { $0 }.allSatisfy { $0.index < 0 })
    }
}

/// The telemetry a run writes under the state directory: one trace line per attempt, a signed audit chain, and the
/// noisy summary; never the file's contents, digests or path.
@Suite struct ChunkedUploaderTelemetryTests {
    @Test func aRunWritesItsTraceAuditAndNoisySummaryUnderTheStateDirectory() async throws {
        let content = UploadFixture.seeded(300_000, seed: 31)
        let fixture = try UploadFixture(bytes: content)
        defer { fixture.clean() }
        let backend = InMemoryBackend()
        backend.state.withLock { $0.failures = [.connectionClosed, .serverFailed] }
        let state = try UploadStateDirectory(path: FilePath(fixture.stateDirectory))
        let extra = FilePath(fixture.directory + "/extra.trace")
        let recorder = try TelemetryRecorder(stateDirectory: state, uploadKey: fixture.key, traceFile: extra)
        let uploader = ChunkedUploader(
            target: .init(file: FilePath(fixture.file), destination: "memory://dest", mode: .native),
            backend: backend, snapshots: try fixture.store(), snapshotKey: fixture.key,
            configuration: UploadConfiguration(
                chunkSize: 64 << 10, parallel: 2, initialBackoff: 0.001, maximumBackoff: 0.004),
            breaker: UploadCircuitBreaker(configuration: UploadFixture.lenientBreaker), telemetry: recorder)
        let outcome = try await uploader.run { _ in }
        #expect(outcome.partCount == 5)

        let files = try FileManager.default.contentsOfDirectory(atPath: fixture.stateDirectory + "/telemetry")
        let traceName = try #require(files.first { $0.hasSuffix(".trace.jsonl") })
        let auditName = try #require(files.first { $0.hasSuffix(".audit.jsonl") })
        func lines(_ path: String) throws -> [[UInt8]] {
            Array(try #require(FileManager.default.contents(atPath: path))).split(separator: UInt8(ascii: "\n"))
                .map(Array.init)
        }
        let trace = try lines(fixture.stateDirectory + "/telemetry/" + traceName)
        // Five parts acknowledged and two attempts retried: seven attempts, seven lines.
        #expect(trace.count == 7)
        let text = trace.map { String(decoding: $0, as: UTF8.self) }
        #expect(text.filter { $0.contains("\"outcome\":\"acknowledged\"") }.count == 5)
        #expect(text.filter { $0.contains("\"outcome\":\"retried\"") }.count == 2)
        #expect(try lines(extra.description) == trace)

        let key = try UploadTelemetry.auditKey(master: try state.masterKey())
        let audit = try AuditLog.verify(
            lines: try lines(fixture.stateDirectory + "/telemetry/" + auditName), key: key)
        #expect(audit.first?.event == .started)
        #expect(audit.filter { $0.event == .chunkAcknowledged }.count == 5)
        #expect(audit.suffix(2).map(\.event) == [.verified, .completed])

        let summary = try #require(try TelemetryRecorder.summary(stateDirectory: state, uploadKey: fixture.key))
        #expect(String(decoding: summary, as: UTF8.self).contains("\"retryFraction\""))
        // Nothing names the file or its digests.
        let everything = (trace + [summary]).map { String(decoding: $0, as: UTF8.self) }.joined()
        #expect(!everything.contains(SHA256.hash(content).hex))
        #expect(!everything.contains(fixture.file))
        #expect(!everything.contains("input.bin"))
        #expect(recorder.writeFailures == 0)
    }

    @Test func againstARealReceiverEveryTraceLineNamesTheProtocolAndWhetherTheConnectionWasReused() async throws {
        let fixture = try NativeUploadFixture(bytes: UploadFixture.seeded(20 * 16_384, seed: 32))
        let state = try UploadStateDirectory(path: FilePath(fixture.upload.stateDirectory))
        let key = SnapshotKey.derive(canonicalPath: FilePath(fixture.upload.file), destination: fixture.destination)
        let recorder = try TelemetryRecorder(stateDirectory: state, uploadKey: key)
        let uploader = ChunkedUploader(
            target: .init(
                file: FilePath(fixture.upload.file), destination: fixture.destination, mode: .native),
            backend: try await fixture.backend(), snapshots: try fixture.upload.store(), snapshotKey: key,
            configuration: UploadConfiguration(
                chunkSize: 16 << 10, parallel: 2,
                flags: FeatureFlags(enabled: FeatureFlags.defaults.enabled.subtracting([.dedup]))),
            telemetry: recorder)
        let outcome = try await uploader.run { _ in }
        #expect(outcome.partCount == 20)
        let directory = fixture.upload.stateDirectory + "/telemetry"
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".trace.jsonl") })
        let contents = try #require(FileManager.default.contents(atPath: directory + "/" + name))
        let lines = String(decoding: contents, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 20)
        // libcurl talks HTTP/1.1 to the clear-text receiver and keeps connections alive between chunks.
        #expect(lines.allSatisfy { $0.contains("\"transportProtocol\":\"h1\"") })
        let reused = lines.filter { $0.contains("\"connectionReused\":true") }.count
        let fresh = lines.filter { $0.contains("\"connectionReused\":false") }.count
        #expect(reused + fresh == 20)
        // Two streams open two connections and reuse them; a loaded machine (the whole suite on two cores) was seen
        // to open up to six when a request started before another's connection was back in the pool. Without
        // keep-alive every line would be fresh.
        #expect(reused > fresh, "\(reused) reused, \(fresh) fresh")
        #expect(!lines.contains { $0.contains("pathChanges") })
    }
}
