import AetherCoding
public import AetherIO
import AetherIntegrity
public import AetherScheduling
import AetherSecurity
public import AetherTransport
import Synchronization

/// The one owner of one upload (upload-engine v2.2 ChunkedUploader): reads the file in parts with one-pass
/// SHA-256 + CRC32C (AetherIO), adds each part's Merkle leaf and chain link in one step (AetherIntegrity), lets
/// the fusion scheduler pick the part size and re-decide the parallelism as acknowledgements arrive
/// (AetherScheduling, with the circuit breaker around the backend), and sends the parts through an injected
/// `UploadBackend` (AetherTransport), retrying retryable failures with backoff. Resume goes through
/// `EnhancedResumeManager`; the snapshot is saved after each acknowledged part. Completion compares the
/// destination's receipt (size, and SHA-256, Merkle root and chain head where it gives them) with the local values.
///
/// Memory: at most `parallel` part buffers are held by sends, plus the reader's read-ahead.
/// Cancellation (ERR-3) is checked in every loop; a cancelled upload keeps its snapshot (paused), and throws
/// `.cancelled`. Events (ERR-5) come on a bounded `AsyncThrowingStream`.
public actor ChunkedUploader {
    /// What is uploaded and where, as recorded in the snapshot.
    public struct Target: Sendable {
        /// The file (bytes as given; the snapshot key uses the canonical path).
        public var file: FilePath
        /// The destination as given.
        public var destination: String
        /// The protocol name recorded for `aether resume` (`native`, `ietf`, `tus`, `s3`).
        public var protocolName: String
        /// The S3 endpoint recorded for `aether resume`, if any.
        public var endpoint: String?

        /// Whether the server is on this host: the S3 endpoint's host when one is given (an `s3://` destination
        /// names a bucket, not a host), else the destination's. Before any measurement such an upload starts as
        /// ULTRAFAST (its part size and streams).
        var isLoopback: Bool { LoopbackDestination.contains(endpoint ?? destination) }

        /// A target.
        public init(file: FilePath, destination: String, protocolName: String, endpoint: String? = nil) {
            self.file = file
            self.destination = destination
            self.protocolName = protocolName
            self.endpoint = endpoint
        }
    }

    let target: Target
    let backend: any UploadBackend
    let resume: EnhancedResumeManager
    let snapshots: any SnapshotStore
    let configuration: UploadConfiguration
    let scheduler: FusionScheduler
    private let breaker: UploadCircuitBreaker
    /// Resets, refusals and timeouts seen by this uploader's requests: the scheduler keeps requests short of them.
    nonisolated let interruptions = InterruptionLog()
    /// Failed attempts that were the destination's answer or a damaged transfer, not an interruption of the path:
    /// the loss the parity decision reads. A reset, refusal or timeout fails every request in flight at once and
    /// its retry resends them; a parity shard repairs none of that and only adds bytes (`docs/UPLOADER.md`).
    nonisolated let answeredFailures = Atomic<Int>(0)
    /// Wakes requests waiting out a reset or refused connection once another request gets through.
    nonisolated let pathRecovery = PathRecovery()
    /// The link planner's inputs for the upload under way and the gate every attempt passes.
    nonisolated let linkPlanning = LinkPlanning()
    let pacer: RatePacer?
    /// The device's degradation level (thermal, battery, memory), re-read at the decisions; nil when
    /// `configuration.resourceRoot` is nil.
    nonisolated let resources: UnifiedResourceManager?
    let clock: any AetherClock
    let telemetry: TelemetryRecorder?
    var state: RunState?

    /// An uploader for `target` over `backend`, keeping its snapshot under `snapshotKey` in `snapshots`.
    public init(
        target: Target, backend: any UploadBackend, snapshots: any SnapshotStore, snapshotKey: String,
        configuration: UploadConfiguration = UploadConfiguration(), scheduler: FusionScheduler = FusionScheduler(),
        breaker: UploadCircuitBreaker = UploadCircuitBreaker(), clock: any AetherClock = SystemClock(),
        telemetry: TelemetryRecorder? = nil
    ) {
        self.telemetry = telemetry
        self.target = target
        self.backend = backend
        self.resume = EnhancedResumeManager(store: snapshots, key: snapshotKey)
        self.snapshots = snapshots
        self.configuration = configuration
        self.scheduler = scheduler
        self.breaker = breaker
        self.pacer = configuration.maximumBytesPerSecond.flatMap { try? RatePacer(bytesPerSecond: $0, clock: clock) }
        self.resources = configuration.resourceRoot.map {
            UnifiedResourceManager(
                reader: DeviceResourceReader(root: $0), configuration: configuration.resourceThresholds, clock: clock)
        }
        self.clock = clock
    }

    /// Runs the upload in a task and returns its events; the stream ends after `.completed` or with the error.
    /// Ending the iteration (or cancelling the consuming task) cancels the upload, which keeps its snapshot.
    public nonisolated func events(bufferLimit: Int = 256) -> AsyncThrowingStream<UploadEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<UploadEvent, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(max(bufferLimit, 1)))
        let task = Task {
            do {
                _ = try await self.run { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Runs the upload, passing each event to `emit`; returns the outcome (also sent as `.completed`).
    public func run(_ emit: @escaping @Sendable (UploadEvent) -> Void) async throws(UploaderError) -> UploadOutcome {
        try configuration.validate()
        let fingerprint: FileFingerprint
        do {
            fingerprint = try FileFingerprint(path: target.file)
        } catch {
            throw Self.readError(error)
        }
        var plan = await resume.plan(
            fingerprint: fingerprint, destination: target.destination, backend: backend,
            pathWait: PathFailureWait(resetLimit: configuration.connectionWaitLimit))
        if let earlier = plan.snapshot?.receiptMismatch {
            throw runFailure(Self.earlierMismatch(earlier))
        }
        var restarts = 0
        while true {
            if let abandoned = plan.abandoned { try? await backend.abort(abandoned) }
            if plan.snapshot == nil { try await resume.remove() }
            do {
                return try await transfer(plan: plan, fingerprint: fingerprint, emit: emit)
            } catch let mismatch as PartMismatch {
                // The file changed since the earlier run although its fingerprint did not: never combine versions.
                restarts += 1
                guard restarts <= 1 else {
                    throw UploaderError(.fileChanged, "\(target.file) keeps changing while it is uploaded")
                }
                plan = .fresh(
                    reason: "part \(mismatch.index) differs from the earlier run (the file changed); starting fresh",
                    abandoned: mismatch.remote)
            } catch {
                let failure = runFailure(error)
                if failure.code == .verificationFailed { await resume.recordMismatch(failure.message) }
                throw failure
            }
        }
    }

    /// The failure of a run whose snapshot records that the destination failed verification before: the upload is
    /// not continued or completed again (what the destination holds is not this file).
    static func earlierMismatch(_ recorded: String) -> UploaderError {
        UploaderError(
            .verificationFailed,
            "an earlier run of this upload found that the destination does not hold this file (\(recorded)); "
                + "it is not completed again")
    }

    /// The typed error a run ends with, audited: an UploaderError as it is, a cancellation as a pause (the state is
    /// kept), anything else as a transport failure.
    nonisolated func runFailure(_ error: any Error) -> UploaderError {
        if let error = error as? UploaderError {
            audit(failure: error)
            return error
        }
        if error is CancellationError {
            telemetry?.audit(.cancelled)
            return UploaderError(.cancelled, "the upload was paused; its state is kept for a resume")
        }
        telemetry?.audit(.cancelled, errorCode: "transport-failed")
        return UploaderError(.transportFailed, "\(error)", errno: (error as? TransportError)?.errno)
    }

    /// Checks the destination's receipt against what was sent: the size, then every digest the destination reports
    /// (SHA-256, Merkle root, chain head), compared in constant time; returns the names of the digests checked.
    static func verify(
        _ receipt: UploadReceipt, size: Int64, sha256: Digest32, merkleRoot: Digest32, chainHead: Digest32
    ) throws(UploaderError)
        -> [String]
    {
        guard receipt.size == size else {
            throw UploaderError(
                .verificationFailed, "the destination stored \(receipt.size) bytes where \(size) were sent")
        }
        var checked: [String] = []
        for (name, theirs, ours) in [
            ("sha256", receipt.serverSHA256, sha256),
            ("merkle-root", receipt.serverMerkleRoot, merkleRoot),
            ("chain-head", receipt.serverChainHead, chainHead),
        ] {
            guard let theirs else { continue }
            guard ConstantTime.equals(theirs.bytes, ours.bytes) else {
                throw UploaderError(
                    .verificationFailed,
                    "the destination's \(name) does not match the local one; the stored object is not this file")
            }
            checked.append(name)
        }
        return checked
    }

    struct PartMismatch: Error {
        let index: Int
        let remote: RemoteUpload
    }

    /// The part size before any measurement: the scheduler's when it has a prediction, else the ULTRAFAST tier's
    /// for a loopback destination and the NORMAL tier's for any other.
    static func firstChunkSize(_ decision: SchedulingDecision, loopback: Bool = false) -> Int {
        guard decision.predictedBitsPerSecond > 0 else {
            return NetworkSpeedTier(loopback: loopback).strategy(availableMemoryBytes: nil).chunkSizeBytes
        }
        return decision.chunkSizeBytes
    }

    /// The parallelism before any measurement: the scheduler's, or the ULTRAFAST tier's on loopback.
    static func firstParallelism(_ decision: SchedulingDecision, loopback: Bool) -> Int {
        guard decision.predictedBitsPerSecond <= 0, loopback else { return decision.parallelism }
        return NetworkSpeedTier.ultrafast.strategy(availableMemoryBytes: nil).parallelChunks
    }

    /// The most bytes read ahead: prefetched chunks are buffers beyond the ones in flight, and the upload keeps its
    /// memory within parallel x chunk size + 64 MiB (issue 17), so read-ahead takes at most 4 MiB of that slack.
    static let prefetchByteBudget = 4 << 20

    /// The chunks read ahead: the ULTRAFAST tier's prefetch (when memory allows it) on a loopback destination before
    /// any measurement, else what the scheduler's tier says; never more than `prefetchByteBudget` bytes of chunks.
    static func firstPrefetch(
        _ decision: SchedulingDecision, loopback: Bool, availableMemoryBytes: Int64?, chunkSize: Int
    ) -> Int {
        let wanted =
            decision.predictedBitsPerSecond <= 0 && loopback
            ? NetworkSpeedTier.ultrafast.strategy(availableMemoryBytes: availableMemoryBytes).prefetchChunks
            : decision.strategy.prefetchChunks
        return min(wanted, prefetchByteBudget / max(1, chunkSize))
    }

    private func initialDecision(size: Int64, availableMemoryBytes: Int64?) -> SchedulingDecision {
        let capabilities = backend.capabilities
        let context = SchedulingContext(
            minimumChunkBytes: Int(clamping: capabilities.minimumPartSize),
            maximumChunkBytes: Int(clamping: capabilities.maximumPartSize), maximumParts: capabilities.maximumParts,
            totalBytes: size, availableMemoryBytes: availableMemoryBytes, parallelismCap: configuration.parallel)
        return scheduler.decide(context.applying(resourceLevel))
    }

    private func transfer(
        plan: ResumePlan, fingerprint: FileFingerprint, emit: @escaping @Sendable (UploadEvent) -> Void
    )
        async throws -> UploadOutcome
    {
        let size = fingerprint.size
        let capabilities = backend.capabilities
        resources?.refresh()
        let availableMemory = resources?.lastSnapshot.availableMemoryBytes
        let decision = initialDecision(size: size, availableMemoryBytes: availableMemory)
        let loopback = target.isLoopback
        let canParallel = capabilities.parallelParts && capabilities.outOfOrderParts
        let parallelLimit =
            canParallel ? (configuration.parallel ?? UploadConstants.maxParallelChunkUploadsUltrafast) : 1
        var snapshot: ResumeSnapshot
        var createdScheme: ParityScheme?
        var prePass: DedupDigest?
        if let earlier = plan.snapshot {
            snapshot = earlier
        } else {
            let layout: PartLayout
            do {
                layout = try PartLayout(
                    objectSize: size,
                    preferred: Int64(
                        configuration.chunkSize ?? configuration.partSize
                            ?? (configuration.flags.adaptiveChunking
                                ? Self.firstChunkSize(decision, loopback: loopback) : ChunkReadOptions.defaultChunkSize)
                    ).runUnit(
                        takesRuns: configuration.chunkSize == nil && configuration.partSize == nil
                            && takesRuns()),
                    capabilities: capabilities)
            } catch {
                throw UploaderError(.invalidArgument, error.message)
            }
            let sessionID = SecureRandom.bytes(16).map { String($0, radix: 16) }.joined()
            createdScheme = paritySchemeAtCreation(decision: decision, size: size, partCount: layout.partCount)
            let creator = try sender(parity: createdScheme, compression: nil)
            let digest = try digestFirstForDedup(layout: layout, sessionID: sessionID)
            prePass = digest
            let description = UploadDescription(
                size: size, layout: layout, contentType: configuration.contentType, metadata: configuration.metadata,
                chainSessionID: sessionID, contentID: digest.map { ACI(digest: $0.sha256).description })
            let (created, _) = try await withRetries(index: -1, emit: emit) {
                () async throws(TransportError) -> (RemoteUpload, [UInt8]?) in
                if let native = creator.features.native {
                    let (upload, status) = try await native.createUpload(description)
                    return (upload, status.possessionChallenge)
                }
                return (try await creator.create(description), nil)
            }
            let remote = created.0
            snapshot = ResumeSnapshot(
                filePath: target.file.bytes, destination: target.destination, protocolName: target.protocolName,
                endpoint: target.endpoint, fingerprint: ResumeSnapshot.Fingerprint(fingerprint), remote: remote,
                partSize: layout.partSize, partCount: layout.partCount, chainSessionID: sessionID,
                createdAt: clock.wallWholeSeconds())
            snapshot.acknowledged = [:]
            try await resume.save(snapshot)
            if let challenge = created.1, let digest, let native = creator.features.native,
                let outcome = try await deduplicated(
                    native, remote: remote, challenge: challenge, digest: digest, snapshot: snapshot, plan: plan,
                    tier: decision.strategy.tier, emit: emit)
            {
                return outcome
            }
        }
        let extras = await extrasOfRun(snapshot: snapshot, fresh: plan.snapshot == nil, scheme: createdScheme)
        // Parts held elsewhere but not (yet) known to this snapshot are trusted from the plan.
        var acknowledged = plan.held
        snapshot.acknowledged = snapshot.acknowledged.filter { acknowledged[$0.key] != nil }
        let reused = acknowledged.values.reduce(Int64(0)) { $0 + $1.length }
        let report = ResumeReport(
            level: plan.level, reusedParts: plan.snapshot == nil ? 0 : acknowledged.count,
            reusedBytes: plan.snapshot == nil ? 0 : reused, reason: plan.reason)
        emit(.resume(report))
        if plan.snapshot == nil {
            telemetry?.audit(.started)
        } else {
            telemetry?.audit(.resumed, resumeLevel: report.level.rawValue)
        }

        let wanted = min(
            parallelLimit,
            max(
                1,
                configuration.parallel
                    ?? (configuration.flags.adaptiveChunking
                        ? Self.firstParallelism(decision, loopback: loopback)
                        : UploadConstants.maxParallelChunkUploads)))
        let parallel = cappedByDevice(wanted)
        var tier = decision.strategy.tier
        let runSender = runSender(for: snapshot.remote, extras: extras)
        // Before the first measurement: on loopback the ULTRAFAST tier's request (the link runs at memory speed
        // unless a relay fronts it, and a cut run keeps its finished parts), elsewhere one part per request; the
        // run then follows what the link carries.
        let runParts = RunPlanner.partsPerRequest(
            chunkSizeBytes: decision.predictedBitsPerSecond > 0
                ? decision.chunkSizeBytes : (loopback ? Self.firstChunkSize(decision, loopback: true) : 0),
            partSize: snapshot.partSize, maximum: runSender?.1 ?? 1)
        linkPlanning.begin(
            PlanningInputs(
                partSize: snapshot.partSize, size: size, runMaximum: runSender?.1 ?? 1, parallelLimit: parallelLimit))
        linkPlanning.gate.setLimit(parallel)
        emit(
            .tierChanged(
                TierReport(
                    tier: tier, chunkSize: snapshot.partSize, parallelism: parallel,
                    predictedBitsPerSecond: decision.predictedBitsPerSecond,
                    requestSize: Int64(runParts) * snapshot.partSize, resourceLevel: resourceLevel)))

        let ledger = try Self.ledger(sessionID: snapshot.chainSessionID, count: snapshot.partCount)
        let reader: FileChunkReader
        do {
            reader = try FileChunkReader(
                path: target.file,
                options: ChunkReadOptions(
                    chunkSize: Int(snapshot.partSize),
                    prefetchChunks: resourceLevel.allowsPrefetch
                        ? Self.firstPrefetch(
                            decision, loopback: loopback, availableMemoryBytes: availableMemory,
                            chunkSize: Int(snapshot.partSize)) : 0,
                    heldChunks: min(64, parallelLimit * (runSender?.1 ?? 1))))
        } catch {
            throw Self.readError(error)
        }
        guard reader.identity.size == size else {
            throw UploaderError(.fileChanged, "\(target.file) changed size while the upload started")
        }
        var counters = Counters(total: size, reused: plan.snapshot == nil ? 0 : reused)
        if plan.level == .chain { counters.verified = counters.acknowledged }
        let tracker = MultiLayerProgressTracker(totalBytes: UInt64(size), clock: clock)
        if counters.reused > 0 {
            tracker.wireSent(UInt64(counters.reused))
            tracker.acknowledged(UInt64(counters.reused), merkleVerified: plan.level == .chain)
        }
        let idempotency = try ChunkIdempotencyManager(
            session: snapshot.chainSessionID, clock: clock,
            journal: snapshots.idempotencyJournal(session: snapshot.chainSessionID))
        emit(.progress(counters.progress(tracker.sample(), tier: tier)))
        let remote = snapshot.remote
        answeredFailures.store(0, ordering: .relaxed)  // the loss rate is this run's, as `RunState.attempts` is
        state = RunState(
            snapshot: snapshot, acknowledged: acknowledged, knownHashes: plan.knownHashes, counters: counters,
            tier: tier, parallel: parallel, parallelLimit: parallelLimit, reader: reader, ledger: ledger,
            tracker: tracker, started: clock.monotonicSeconds(), emit: emit, extras: extras,
            prePass: prePass.flatMap { $0.identity == reader.identity ? $0 : nil }, runSender: runSender,
            runParts: runParts, runLength: RunLength(runParts))
        defer { state = nil }

        // Each task returns what it sent and the bytes it held in flight, so the scheduler sees the bytes really in
        // flight: counted as requests × the current run length, a decision of 16 MiB runs made the next one see
        // 16 MiB a request, shrink to 1 MiB, see 1 MiB a request, and grow again, one request after another.
        try await withThrowingTaskGroup(of: (SentWork, Int).self) { group in
            var inFlight = 0
            var inFlightBytes = 0
            while true {
                // A stream frees first, then the work is formed: a run takes the run length decided by the request
                // that just ended, not the one current before the wait (on a link whose rate swings, the lag kept
                // every request at one part while the decisions rose to 16).
                while inFlight >= self.parallelNow, let (sent, bytes) = try await group.next() {
                    inFlight -= 1
                    inFlightBytes -= bytes
                    try await self.settle(sent, inFlightBytes: inFlightBytes)
                }
                try Task.checkCancellation()
                guard let work = try self.nextWorkOrRun() else { break }
                inFlight += 1
                switch work {
                case .part(let part):
                    let bytes = Int(part.length)
                    inFlightBytes += bytes
                    group.addTask {
                        let sent = try await self.send(
                            part, to: remote, tracker: tracker, idempotency: idempotency, emit: emit)
                        return (.part(sent), bytes)
                    }
                case .parity(let shard, let via):
                    let bytes = Int(shard.length)
                    inFlightBytes += bytes
                    group.addTask { (try await self.sendParity(shard, via: via, to: remote, emit: emit), bytes) }
                case .run(let parts, let via):
                    let runLength = self.runLengthNow
                    let bytes = Int(parts.reduce(Int64(0)) { $0 + $1.length })
                    inFlightBytes += bytes
                    group.addTask {
                        let sent = try await self.send(
                            run: parts, via: via, to: remote, length: runLength, tracker: tracker,
                            idempotency: idempotency, emit: emit)
                        return (sent, bytes)
                    }
                }
            }
            while let (sent, bytes) = try await group.next() {
                inFlight -= 1
                inFlightBytes -= bytes
                try Task.checkCancellation()
                try await self.settle(sent, inFlightBytes: inFlightBytes)
            }
        }
        try Task.checkCancellation()
        guard let run = state else { throw UploaderError(.cancelled, "the upload stopped") }
        snapshot = run.snapshot
        acknowledged = run.acknowledged
        counters = run.counters
        tier = run.tier
        let partsSent = run.partsSent
        let fileSHA = run.prePass?.sha256 ?? run.fileHash.finalize()
        guard acknowledged.count == snapshot.partCount, ledger.count == snapshot.partCount else {
            throw UploaderError(
                .fileChanged, "\(target.file) gave \(ledger.count) parts where \(snapshot.partCount) were expected")
        }
        let spotChecks = try await spotCheck(
            remote, chunkHashes: run.chunkHashes, identity: reader.identity, emit: emit)
        // Listed only from a verifier that judged every sampled chunk's MAC right: never for hashes alone.
        var checked: [String] = spotChecks.passed ? ["byzantine-sample"] : []
        let summary = ledger.summary
        let sha256 = fileSHA
        let completion = CompletionSummary(
            parts: (0..<snapshot.partCount).compactMap { acknowledged[$0] }, fileSHA256: sha256,
            merkleRoot: summary.merkleRoot, chainHead: summary.chainHead)
        let backend = self.backend
        let (receipt, _) = try await withRetries(index: -1, emit: emit) { () async throws(TransportError) in
            try await backend.complete(remote, summary: completion)
        }
        checked += try Self.verify(
            receipt, size: size, sha256: sha256, merkleRoot: summary.merkleRoot, chainHead: summary.chainHead)
        try await resume.remove()
        snapshots.discardIdempotencyJournal(session: snapshot.chainSessionID)
        if !checked.isEmpty {
            let unverified = UInt64(size) - tracker.snapshot.merkleVerified
            if unverified > 0 { emitValves(tracker.merkleVerified(unverified), emit) }
            counters.verified = size
        }
        emit(.progress(counters.progress(tracker.sample(), tier: tier)))
        telemetry?.audit(.verified)
        telemetry?.audit(.completed)
        telemetry?.finish(
            completed: true, resumed: plan.snapshot != nil, totalBytes: UInt64(size),
            seconds: clock.monotonicSeconds() - run.started)
        let outcome = UploadOutcome(
            receipt: receipt, sha256: sha256, merkleRoot: summary.merkleRoot, chainHead: summary.chainHead,
            serverVerified: checked, partsSent: partsSent, bytesSent: counters.runBytes,
            partCount: snapshot.partCount, resume: report, parityShardsSent: run.parityShardsSent,
            spotChecks: spotChecks, congestionControl: interruptions.congestionControl)
        emit(.completed(outcome))
        return outcome
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    private var parallelNow: Int { state?.parallel ?? 1 }

    private var runLengthNow: RunLength { state?.runLength ?? RunLength(1) }

    /// The next part to send: reads, hashes, commits to the ledger; skips parts the destination holds.
    func nextPart() throws -> PartToSend? {
        guard var run = state else { return nil }
        defer { state = run }
        while true {
            try Task.checkCancellation()
            let part: PartToSend
            if run.snapshot.remote.size == 0 {
                guard run.nextIndex == 0 else { return nil }
                let empty = SHA256.hash([UInt8]())
                _ = try Self.append(run.ledger, empty)
                run.chunkHashes.append(empty)
                part = PartToSend(
                    index: 0, offset: 0, body: .empty, length: 0, sha256: empty, crc32c: 0,
                    link: run.ledger.chainHead, via: run.extras.plain)
            } else {
                guard let chunk = try Self.next(run.reader) else { return nil }
                let digest = Self.digest(of: chunk, run: &run)
                _ = try Self.append(run.ledger, digest.sha256)
                run.chunkHashes.append(digest.sha256)
                if let known = run.knownHashes[chunk.index], known != digest.sha256 {
                    throw PartMismatch(index: chunk.index, remote: run.snapshot.remote)
                }
                // A part the destination holds from an earlier run, with the checksum it reports for it (S3 ListParts):
                // the same check its upload's answer had.
                if let theirs = run.acknowledged[chunk.index]?.checksumCRC32C, theirs != digest.crc32c {
                    throw UploaderError(
                        .verificationFailed,
                        "the destination holds part \(chunk.index) with CRC32C \(Self.hex(theirs)), the file's part has "
                            + "\(Self.hex(digest.crc32c))")
                }
                part = PartToSend(
                    index: chunk.index, offset: chunk.offset, body: .chunks([chunk]), length: Int64(chunk.count),
                    sha256: digest.sha256, crc32c: digest.crc32c, link: run.ledger.chainHead,
                    via: Self.sender(for: run))
                try collectParity(&run, chunk: chunk, isNew: run.acknowledged[chunk.index] == nil)
            }
            run.nextIndex += 1
            if run.acknowledged[part.index] != nil { continue }
            run.counters.sent += part.length
            run.partsSent += 1
            return part
        }
    }

    /// Records an acknowledged part: snapshot, counters, scheduler measurement and decision, events.
    private func settle(_ work: SentWork, inFlightBytes: Int) async throws {
        switch work {
        case .parity(let bytes):
            guard var run = state else { return }
            run.counters.runBytes += bytes
            run.parityShardsSent += 1
            state = run
        case .part(let part): try await settle(part: part, inFlightBytes: inFlightBytes)
        case .run(let parts):
            // One snapshot for the run: saved per part, its encoding (every acknowledged part so far) made the
            // client's CPU grow with the square of the part count (47 % of it for 1,024 parts of 1 MiB).
            for part in parts { try await settle(part: part, inFlightBytes: inFlightBytes, save: false) }
            if let run = state { try await resume.save(run.snapshot) }
        }
    }

    private func settle(part sent: SentPart, inFlightBytes: Int, save: Bool = true) async throws {
        guard var run = state else { return }
        run.attempts += sent.attempts
        let capabilities = backend.capabilities
        run.acknowledged[sent.receipt.index] = sent.receipt
        run.snapshot.acknowledged[sent.receipt.index] = ResumeSnapshot.AcknowledgedPart(
            receipt: sent.receipt, sha256: sent.sha256.hex)
        run.counters.acknowledged += sent.receipt.length
        run.counters.runBytes += sent.bytesOnWire
        let verified = !capabilities.checksums.isEmpty || sent.receipt.checksumCRC32C == sent.crc32c
        if verified { run.counters.verified += sent.receipt.length }
        emitValves(run.tracker.acknowledged(UInt64(sent.receipt.length), merkleVerified: verified), run.emit)
        let now = clock.monotonicSeconds()
        // The link's rate, not one stream's: every byte acknowledged over this part's send time, whichever stream
        // carried it (`AcknowledgementWindow`). A run's parts are measured once, as one request of the run's bytes
        // (its first part carries them).
        let measured = sent.measuredBytes ?? sent.receipt.length
        if measured > 0 {
            run.acknowledgements.record(bytes: measured, at: now)
            let sample = run.acknowledgements.sample(now: now, window: sent.seconds)
            if sample.seconds > 0 {
                scheduler.record(
                    BandwidthMeasurement(bytes: Int(sample.bytes), duration: sample.seconds, timestamp: now))
            }
        }
        var nextParallel = run.parallel
        var nextRunParts = run.runParts
        var nextTier = run.tier
        var predicted = 0.0
        if let (plan, decision) = plannedRequests(inFlightBytes: inFlightBytes), let inputs = linkPlanning.current {
            nextTier = decision.strategy.tier
            predicted = decision.predictedBitsPerSecond
            if configuration.flags.adaptiveChunking {
                nextParallel = min(run.parallelLimit, streams(of: plan, inputs: inputs))
                nextRunParts = Self.parts(of: plan, inputs: inputs)
                linkPlanning.gate.setLimit(nextParallel)
            }
        }
        let nextLevel = resourceLevel
        let changed =
            nextTier != run.tier || nextParallel != run.parallel || nextRunParts != run.runParts
            || nextLevel != run.resourceLevel
        run.tier = nextTier
        run.resourceLevel = nextLevel
        run.parallel = nextParallel
        run.runParts = nextRunParts
        run.runLength.set(nextRunParts)
        state = run
        if save { try await resume.save(run.snapshot) }
        if changed {
            run.emit(
                .tierChanged(
                    TierReport(
                        tier: run.tier, chunkSize: run.snapshot.partSize, parallelism: run.parallel,
                        predictedBitsPerSecond: predicted,
                        requestSize: Int64(run.runParts) * run.snapshot.partSize, resourceLevel: run.resourceLevel)))
        }
        telemetry?.audit(.chunkAcknowledged, chunkIndex: sent.receipt.index)
        run.emit(.chunkAcknowledged(sent.receipt))
        run.emit(.progress(run.counters.progress(run.tracker.sample(), tier: run.tier)))
    }

    /// One attempt at sending `part`, with a fresh `Idempotency-Key` (never one of an earlier run: the journal
    /// keeps the attempt watermark) and the progress tracker's wire layer kept in step.
    private static func attempt(
        _ part: PartToSend, to remote: RemoteUpload, backend: any UploadBackend, tracker: MultiLayerProgressTracker,
        idempotency: ChunkIdempotencyManager, telemetry: TelemetryRecorder?, interruptions: InterruptionLog,
        clock: any AetherClock, emit: @Sendable (UploadEvent) -> Void
    ) async throws(TransportError) -> PartReceipt {
        let key: IdempotencyKey
        let attemptNumber: Int
        do {
            (key, attemptNumber) = try idempotency.reserveNextAttempt(index: part.index, chunkHash: part.sha256)
        } catch {
            throw TransportError(.invalidArgument, "no idempotency key for part \(part.index): \(error.message)")
        }
        let upload = UploadPart(
            index: part.index, offset: part.offset, body: part.body, length: part.length, sha256: part.sha256,
            crc32c: part.crc32c, chainLink: part.link, idempotencyKey: key.hex)
        emitValves(tracker.wireSent(UInt64(part.length)), emit)
        let started = clock.wallMilliseconds()
        let start = clock.monotonicSeconds()
        let observer = HTTPTelemetryObserver()
        func trace(_ outcome: ChunkOutcome, _ error: TransportError? = nil) {
            let http = observer.last
            if let http, !http.connectionReused {
                interruptions.noteHandshake(
                    seconds: http.connect / .seconds(1), congestionControl: http.congestionControl)
            }
            telemetry?.trace(
                ChunkTrace(
                    uploadID: "", index: part.index, offset: part.offset, length: Int(part.length),
                    attempt: attemptNumber, startedAtMs: started,
                    durationMs: Int64(((clock.monotonicSeconds() - start) * 1000).rounded()), outcome: outcome,
                    errorCode: error.map { "\($0.code)" },
                    transportProtocol: http.map { TransportProtocol(measured: $0) },
                    connectionReused: http?.connectionReused, pathChanges: nil,
                    rttMicroseconds: interruptions.roundTripTime.map { Int64($0 * 1e6) },
                    congestionControl: http?.congestionControl))
        }
        do {
            let sent: Result<PartReceipt, TransportError> = await HTTPTelemetryObserver.$current.withValue(observer) {
                do throws(TransportError) {
                    return .success(try await backend.send(upload, to: remote))
                } catch {
                    return .failure(error)
                }
            }
            let receipt = try sent.get()
            idempotency.complete(key)
            trace(.acknowledged)
            return receipt
        } catch {
            idempotency.release(key)
            emitValves(tracker.wireFailed(UInt64(part.length)), emit)
            trace(error.code == .cancelled ? .cancelled : (isRetryable(error.code) ? .retried : .failed), error)
            throw error
        }
    }

    private static func emitValves(
        _ events: [MultiLayerProgressTracker.Event], _ emit: @Sendable (UploadEvent) -> Void
    ) {
        for event in events { emit(.safetyValve(event)) }
    }

    private nonisolated func emitValves(
        _ events: [MultiLayerProgressTracker.Event], _ emit: @Sendable (UploadEvent) -> Void
    ) {
        Self.emitValves(events, emit)
    }

    static func ledger(sessionID: String, count: Int) throws(UploaderError) -> ChunkIntegrityLedger {
        do {
            return try ChunkIntegrityLedger(sessionID: sessionID, plannedChunkCount: count)
        } catch {
            throw UploaderError(.integrityFailed, error.message)
        }
    }

    static func append(_ ledger: ChunkIntegrityLedger, _ digest: Digest32) throws(UploaderError)
        -> ChunkIntegrityLedger.Entry
    {
        do {
            return try ledger.append(chunkHash: digest)
        } catch {
            throw UploaderError(.integrityFailed, error.message)
        }
    }

    static func next(_ reader: FileChunkReader) throws(UploaderError) -> Chunk? {
        do {
            return try reader.next()
        } catch {
            throw readError(error)
        }
    }

    static func readError(_ error: IOError) -> UploaderError {
        if error.code == .fileChanged {
            return UploaderError(.fileChanged, error.message)
        }
        return UploaderError(.readFailed, error.message, errno: error.errno)
    }

    /// Sends one part with retries; returns once it is acknowledged.
    private nonisolated func send(
        _ part: PartToSend, to remote: RemoteUpload, tracker: MultiLayerProgressTracker,
        idempotency: ChunkIdempotencyManager, emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> SentPart {
        if let pacer { try await pacer.admit(part.length) }
        let start = clock.monotonicSeconds()
        let unsent = UnsentAttempts()
        let (receipt, attempts) = try await withRetries(index: part.index, slot: part.length, emit: emit) {
            () async throws(TransportError) in
            try await unsent.counting { () async throws(TransportError) in
                try await Self.attempt(
                    part, to: remote, backend: part.via, tracker: tracker, idempotency: idempotency,
                    telemetry: telemetry, interruptions: interruptions, clock: clock, emit: emit)
            }
        }
        // Attempts refused before anything left neither count as bytes sent nor as losses (as for runs).
        let sent = max(1, attempts - unsent.value)
        let onWire = Int64(sent) * part.length
        guard receipt.index == part.index, receipt.length == part.length else {
            throw UploaderError(
                .transportFailed,
                "the destination acknowledged part \(receipt.index) of \(receipt.length) bytes for part \(part.index)")
        }
        emit(
            .requestAcknowledged(
                RequestReport(
                    index: part.index, parts: 1, bytes: part.length, seconds: clock.monotonicSeconds() - start)))
        return SentPart(
            receipt: receipt, sha256: part.sha256, crc32c: part.crc32c, seconds: clock.monotonicSeconds() - start,
            bytesOnWire: onWire, attempts: sent)
    }

    /// Runs `operation` through the circuit breaker, retrying retryable `TransportError`s with backoff.
    /// Returns the result and how many times the operation was sent. A reset or refused connection is retried
    /// for up to `connectionWaitLimit` seconds without counting as an attempt or opening the breaker.
    /// With `slot`, each attempt first passes the link planner's gate for that many bytes (`admitAttempt`).
    nonisolated func withRetries<T: Sendable>(
        index: Int, slot: Int64? = nil, emit: @Sendable (UploadEvent) -> Void,
        _ operation: @Sendable () async throws(TransportError) -> T
    ) async throws -> (T, Int) {
        var attempt = 1
        var sends = 0
        var pathFailures = 0
        var pathFailingSince: ContinuousClock.Instant?
        var waitedForBreaker = 0.0
        // The first attempt that timed out (a stalled connection): a later refusal may be the destination still
        // holding that request, which the final message then says.
        var firstTimeout: (attempt: Int, error: TransportError)?
        while true {
            try Task.checkCancellation()
            switch breaker.permission() {
            case .allowed, .probe: break
            case .refused(let retryAfter):
                waitedForBreaker += retryAfter
                guard waitedForBreaker <= configuration.circuitWaitLimit else {
                    throw UploaderError(
                        .circuitOpen,
                        "the destination kept failing and the circuit breaker stayed open; try again later")
                }
                try await Self.sleep(seconds: max(retryAfter, 0.01))
                continue
            }
            if let slot { try await admitAttempt(bytes: slot) }
            do throws(TransportError) {
                sends += 1
                let result: T
                do throws(TransportError) {
                    result = try await operation()
                } catch {
                    if let slot { linkPlanning.gate.release(bytes: slot) }
                    throw error
                }
                if let slot { linkPlanning.gate.release(bytes: slot) }
                breaker.recordSuccess()
                pathRecovery.noteSuccess()
                return (result, sends)
            } catch {
                if error.code == .cancelled || Task.isCancelled { throw CancellationError() }
                let recoveries = pathRecovery.mark
                interruptions.note(error.code)
                if !InterruptionLog.interrupts(error.code) { answeredFailures.add(1, ordering: .relaxed) }
                let what = index >= 0 ? "part \(index)" : "the request"
                let pathFailure = Self.isPathFailure(error.code)
                let base: Double
                if pathFailure {
                    // Real time, as the sleeps between attempts are (an injected clock may stand still).
                    let since = pathFailingSince ?? .now
                    pathFailingSince = since
                    let failing = since.duration(to: .now) / .seconds(1)
                    guard failing <= configuration.connectionWaitLimit else {
                        throw UploaderError(
                            .transportFailed,
                            "\(what) could not reach the destination for \(Int(failing)) s: \(error.message) "
                                + "(\(error.code))")
                    }
                    pathFailures += 1
                    base = min(
                        configuration.connectionBackoffLimit,
                        configuration.initialBackoff * Double(1 << min(pathFailures - 1, 20)))
                } else if error.code == .receiptMismatch {
                    // The destination says it stored other bytes than this file's: final, and exit 4, not a
                    // transport failure to retry.
                    throw UploaderError(
                        .verificationFailed,
                        "the destination's receipt does not match the file\(index >= 0 ? " at part \(index)" : ""): "
                            + error.message)
                } else {
                    breaker.recordFailure()
                    if error.code == .timedOut, firstTimeout == nil { firstTimeout = (sends, error) }
                    guard Self.isRetryable(error.code), attempt < configuration.maximumAttempts else {
                        var note = ""
                        if let firstTimeout, error.code != .timedOut {
                            note =
                                "; attempt \(firstTimeout.attempt) timed out first (\(firstTimeout.error.message)), and "
                                + "the destination may still hold that request"
                        }
                        throw UploaderError(
                            .transportFailed,
                            "\(what) failed after \(attempt) attempt(s): \(error.message) (\(error.code))\(note)",
                            errno: error.errno)
                    }
                    attempt += 1
                    base = min(
                        configuration.maximumBackoff, configuration.initialBackoff * Double(1 << min(attempt - 2, 20)))
                }
                let delay = base / 2 + Double(SecureRandom.uniform(1000)) / 1000 * base / 2
                emit(.retry(RetryReport(index: index, attempt: sends + 1, cause: error, delay: delay)))
                if pathFailure {
                    try await pathRecovery.sleep(seconds: delay, since: recoveries)
                } else {
                    try await Self.sleep(seconds: delay)
                }
            }
        }
    }

    /// Failures of the path rather than of the destination's answer: the connection was reset or refused.
    static func isPathFailure(_ code: TransportError.Code) -> Bool {
        code == .connectionClosed || code == .connectionRefused
    }

    static func sleep(seconds: Double) async throws {
        guard seconds > 0 else { return }
        try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up))))
    }

    /// Failures worth sending again: the network or the server had a moment, or the destination caught bytes
    /// damaged in transit and refused them (`.checksumMismatch`). A receipt that disagrees with the client's own
    /// computation (`.receiptMismatch`) is never among them.
    static func isRetryable(_ code: TransportError.Code) -> Bool {
        [.timedOut, .connectionClosed, .connectionRefused, .notConnected, .serverFailed, .throttled, .checksumMismatch]
            .contains(code)
    }
}

/// A part ready to send.
struct PartToSend: Sendable {
    let index: Int
    let offset: Int64
    let body: HTTPRequestBody
    let length: Int64
    let sha256: Digest32
    let crc32c: UInt32
    let link: Digest32
    /// The backend variant that sends it (with or without compression, per the tier when it was read).
    let via: any UploadBackend
}

/// A part the destination acknowledged.
struct SentPart: Sendable {
    let receipt: PartReceipt
    let sha256: Digest32
    let crc32c: UInt32
    let seconds: Double
    let bytesOnWire: Int64
    var attempts = 1
    /// The bytes the scheduler measures at this acknowledgement (a run's total on its first part, 0 on the rest);
    /// nil: the part's own length.
    var measuredBytes: Int64?
}

/// The mutable state of one transfer, owned by the uploader actor.
struct RunState {
    var snapshot: ResumeSnapshot
    var acknowledged: [Int: PartReceipt]
    let knownHashes: [Int: Digest32]
    var counters: Counters
    var tier: NetworkSpeedTier
    /// The device's degradation level at the last decision (compression stops from `heavy` on).
    var resourceLevel = DegradationLevel.normal
    var parallel: Int
    let parallelLimit: Int
    let reader: FileChunkReader
    let ledger: ChunkIntegrityLedger
    let tracker: MultiLayerProgressTracker
    let started: Double
    let emit: @Sendable (UploadEvent) -> Void
    let extras: RunExtras
    /// The dedup pre-pass's digests of this file, when it ran: the send pass then hashes nothing again.
    var prePass: DedupDigest? = nil
    let hasher = ChunkHasher(probesCompressibility: false)
    var fileHash = SHA256()
    var nextIndex = 0
    var partsSent = 0
    var chunkHashes: [Digest32] = []
    /// Attempts of this run's parts: with `ChunkedUploader.answeredFailures`, the loss rate the parity decision reads.
    var attempts = 0
    /// The recent acknowledgements, for the link's rate.
    var acknowledgements = AcknowledgementWindow()
    /// Parity of the group being read: its data chunks (zero-padded), the shards it will get, and whether any of
    /// its chunks is sent in this run.
    var group: [[UInt8]] = []
    var groupShards = 0
    var groupHasNew = false
    var pendingParity: [ParityShard] = []
    var parityShardsSent = 0
    /// The backend that sends runs and the most parts per run; nil when every request carries one part.
    let runSender: (any RunSendingBackend, Int)?
    /// Parts per request now (the scheduler's chunk size / part size).
    var runParts: Int
    /// The same, for sends in flight.
    let runLength: RunLength

    var pendingParityIsEmpty: Bool { pendingParity.isEmpty }
}

/// The byte counters behind `UploadProgress`.
struct Counters {
    let total: Int64
    var sent: Int64
    var acknowledged: Int64
    var verified: Int64 = 0
    var runBytes: Int64 = 0
    let reused: Int64

    init(total: Int64, reused: Int64) {
        self.total = total
        self.reused = reused
        sent = reused
        acknowledged = reused
    }

    var runAcknowledged: Int64 { acknowledged - reused }

    func progress(_ sample: MultiLayerProgressTracker.Snapshot, tier: NetworkSpeedTier) -> UploadProgress {
        UploadProgress(
            totalBytes: total, sentBytes: sent, acknowledgedBytes: acknowledged, verifiedBytes: verified,
            bytesPerSecond: sample.bytesPerSecond ?? 0, tier: tier, displayedFraction: sample.displayedFraction,
            secondsRemaining: sample.secondsRemaining)
    }
}

extension ChunkedUploader {
    /// The audit entry of a failed run: a verification failure, a pause, or another failure by its code.
    nonisolated func audit(failure error: UploaderError) {
        switch error.code {
        case .verificationFailed: telemetry?.audit(.verificationFailed, errorCode: "\(error.code)")
        case .cancelled: telemetry?.audit(.cancelled)
        case .snapshotDamaged: telemetry?.audit(.snapshotDamaged, errorCode: "\(error.code)")
        default: telemetry?.audit(.cancelled, errorCode: "\(error.code)")
        }
    }
}

extension TransportProtocol {
    /// The protocol a request went over, as the HTTP client measured it.
    public init(measured telemetry: HTTPTelemetry) {
        switch telemetry.protocolVersion {
        case .http1: self = .http1TCP
        case .http2: self = .http2TCP
        case .http3: self = .http3QUIC
        case .unknown: self = .unknown
        }
    }
}
