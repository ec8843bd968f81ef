import AetherCoding
public import AetherIO
import AetherIntegrity
public import AetherScheduling
import AetherSecurity
public import AetherTransport
import Synchronization

/// The one owner of one upload (upload-engine v2.2 ChunkedUploader): reads the file in parts with one-pass
/// SHA-256 + CRC32C (AetherIO), adds each part's Merkle leaf and chain link in one step (AetherIntegrity), lets
/// the fusion scheduler and the link planner pick the part size, the streams and the parts per request as
/// acknowledgements arrive (AetherScheduling), and sends the parts through an injected `UploadBackend`
/// (AetherTransport) under one `RetryPolicy` (backoff, the circuit breaker, path failures waited out). Resume goes
/// through `ResumePlanner`; the snapshot is saved after each acknowledged part or run. Completion compares the
/// destination's receipt (size, and SHA-256, Merkle root and chain head where it gives them) with the local values.
///
/// The actor is a driver over a pure `TransferStateMachine`: the machine holds the bookkeeping (snapshot, counters,
/// decision, requests in flight) and answers each event with actions; the driver does the I/O, in extensions with
/// one job each: `+Creation` (the remote upload), `+Reading` (parts read and digested), `+NativeFeatures` (parity,
/// compression, dedup), `+Runs` (several parts in one request), `+Send` (one part's attempts), `+Planning` (the
/// link planner's decisions), `+SpotChecks` (the Byzantine sample after the last part), `+Completion` (the
/// completion request and the receipt's check).
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
        /// The protocol, recorded for `aether resume`.
        public var mode: TransportMode
        /// The S3 endpoint recorded for `aether resume`, if any.
        public var endpoint: String?
        /// The device and inode the file must have (a capture's walk saw them with `lstat`): a file replaced since,
        /// by another file or by a link to one outside the folder, is refused rather than uploaded.
        public var expectedIdentity: (device: UInt64, inode: UInt64)?

        /// Whether the server is on this host: the S3 endpoint's host when one is given (an `s3://` destination
        /// names a bucket, not a host), else the destination's. Before any measurement such an upload starts as
        /// ULTRAFAST (its part size and streams).
        var isLoopback: Bool { LoopbackDestination.contains(endpoint ?? destination) }

        /// A target.
        public init(file: FilePath, destination: String, mode: TransportMode, endpoint: String? = nil) {
            self.file = file
            self.destination = destination
            self.mode = mode
            self.endpoint = endpoint
        }
    }

    let target: Target
    let backend: any UploadBackend
    let resume: ResumePlanner
    let snapshots: any SnapshotStore
    let configuration: UploadConfiguration
    let scheduler: FusionScheduler
    /// Retries, backoff and the circuit breaker for every request of the upload, with what they saw.
    nonisolated let retries: RetryPolicy
    /// Resets, refusals and timeouts seen by this uploader's requests: the scheduler keeps requests short of them.
    nonisolated var interruptions: InterruptionLog { retries.interruptions }
    /// The link planner's inputs for the upload under way and the gate every attempt passes.
    nonisolated let linkPlanning = LinkPlanning()
    let pacer: RatePacer?
    /// The device's degradation level (thermal, battery, memory), re-read at the decisions; nil when
    /// `configuration.resourceRoot` is nil.
    nonisolated let resources: DeviceResourceMonitor?
    let clock: any AetherClock
    let telemetry: TelemetryRecorder?
    /// The upload's lock when the caller took it (`UploadJob` takes it before the destination is probed; a
    /// capture's lock covers its files); else `run` takes it from the snapshot store.
    let heldLock: UploadLock?
    var state: RunState?

    /// An uploader for `target` over `backend`, keeping its snapshot under `snapshotKey` in `snapshots`.
    public init(
        target: Target, backend: any UploadBackend, snapshots: any SnapshotStore, snapshotKey: String,
        configuration: UploadConfiguration = UploadConfiguration(), scheduler: FusionScheduler = FusionScheduler(),
        breaker: UploadCircuitBreaker = UploadCircuitBreaker(), clock: any AetherClock = SystemClock(),
        telemetry: TelemetryRecorder? = nil, heldLock: UploadLock? = nil, resources: DeviceResourceMonitor? = nil,
        pacer: RatePacer? = nil
    ) {
        self.telemetry = telemetry
        self.heldLock = heldLock
        self.target = target
        self.backend = backend
        self.resume = ResumePlanner(store: snapshots, key: snapshotKey)
        self.snapshots = snapshots
        self.configuration = configuration
        self.scheduler = scheduler
        self.retries = RetryPolicy(configuration: configuration, breaker: breaker)
        // A pacer given is shared (a capture's files together keep to one rate); else the configuration's, alone.
        self.pacer =
            pacer ?? configuration.maximumBytesPerSecond.flatMap { try? RatePacer(bytesPerSecond: $0, clock: clock) }
        self.resources =
            resources
            ?? configuration.resourceRoot.map {
                DeviceResourceMonitor(
                    reader: DeviceResourceReader(root: $0), configuration: configuration.resourceThresholds,
                    clock: clock)
            }
        self.clock = clock
    }

    /// Runs the upload in a task and returns its events; the stream ends after `.completed` or with the error.
    /// Ending the iteration (or cancelling the consuming task) cancels the upload, which keeps its snapshot.
    public nonisolated func events(bufferLimit: Int = 256) -> AsyncThrowingStream<UploadEvent, any Error> {
        EventStream.make(bufferLimit: bufferLimit) { emit in _ = try await self.run(emit) }
    }

    /// Runs the upload, passing each event to `emit`; returns the outcome (also sent as `.completed`).
    /// The upload's lock (`SnapshotStore.lock`) is held throughout: another uploader of the same key, in this
    /// process or another, gets `.alreadyRunning` instead of sending the same parts and overwriting the snapshot.
    public func run(_ emit: @escaping @Sendable (UploadEvent) -> Void) async throws(UploaderError) -> UploadOutcome {
        try configuration.validate()
        let lock = try heldLock == nil ? snapshots.lock(key: resume.key) : nil
        defer { withExtendedLifetime(lock) {} }
        let fingerprint: FileFingerprint
        do {
            fingerprint = try FileFingerprint(path: target.file)
        } catch {
            throw Self.readError(error)
        }
        if let expected = target.expectedIdentity,
            expected.device != fingerprint.device || expected.inode != fingerprint.inode
        {
            throw UploaderError(
                .fileChanged,
                "\(target.file) was replaced since it was found (another file, or a link to one): not uploaded")
        }
        var plan = await resume.plan(
            fingerprint: fingerprint, destination: target.destination, backend: backend,
            retries: retries)
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
    nonisolated func runFailure(_ error: any Error) -> UploaderError { Self.runFailure(error, telemetry: telemetry) }

    /// `runFailure` for any uploader, audited into `telemetry`.
    static func runFailure(_ error: any Error, telemetry: TelemetryRecorder?) -> UploaderError {
        if let error = error as? UploaderError {
            audit(failure: error, telemetry: telemetry)
            return error
        }
        if error is CancellationError {
            telemetry?.audit(.cancelled)
            return UploaderError(.cancelled, "the upload was paused; its state is kept for a resume")
        }
        telemetry?.audit(.cancelled, errorCode: "transport-failed")
        return UploaderError(.transportFailed, "\(error)", errno: (error as? TransportError)?.errno)
    }

    struct PartMismatch: Error {
        let index: Int
        let remote: RemoteUpload
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
            switch try await create(plan: plan, fingerprint: fingerprint, decision: decision, emit: emit) {
            case .deduplicated(let outcome): return outcome
            case .created(let created, let scheme, let digest):
                snapshot = created
                createdScheme = scheme
                prePass = digest
            }
        }
        let variants = await sendVariants(snapshot: snapshot, fresh: plan.snapshot == nil, scheme: createdScheme)
        // Parts held elsewhere but not (yet) known to this snapshot are trusted from the plan.
        let acknowledged = plan.held
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
        let tier = decision.strategy.tier
        let runSender = runSender(for: snapshot.remote, variants: variants)
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
        guard reader.identity.device == fingerprint.device, reader.identity.inode == fingerprint.inode else {
            throw UploaderError(.fileChanged, "\(target.file) was replaced by another file while the upload started")
        }
        var counters = Counters(total: size, reused: plan.snapshot == nil ? 0 : reused)
        if plan.level == .chain { counters.verified = counters.acknowledged }
        let tracker = ProgressLayers(totalBytes: UInt64(size), clock: clock)
        if counters.reused > 0 {
            tracker.wireSent(UInt64(counters.reused))
            tracker.acknowledged(UInt64(counters.reused), merkleVerified: plan.level == .chain)
        }
        let idempotency = try ChunkIdempotencyManager(
            session: snapshot.chainSessionID, clock: clock,
            journal: snapshots.idempotencyJournal(session: snapshot.chainSessionID))
        emit(.progress(counters.progress(tracker.sample(), tier: tier)))
        let remote = snapshot.remote
        retries.answeredFailures.store(0, ordering: .relaxed)  // the loss rate is this run's, as `RunState.attempts` is
        let machine = TransferStateMachine(
            snapshot: snapshot, acknowledged: acknowledged, counters: counters,
            decision: .init(tier: tier, parallel: parallel, runParts: runParts, resourceLevel: resourceLevel),
            destinationChecksParts: !capabilities.checksums.isEmpty)
        state = RunState(
            machine: machine, knownHashes: plan.knownHashes, parallelLimit: parallelLimit, reader: reader,
            ledger: ledger, tracker: tracker, started: clock.monotonicSeconds(), emit: emit, variants: variants,
            prePass: prePass.flatMap { $0.identity == reader.identity ? $0 : nil }, runSender: runSender,
            runLength: RunLength(runParts))
        defer { state = nil }

        // Each task returns what it sent and the bytes it held in flight, so the scheduler sees the bytes really in
        // flight: counted as requests × the current run length, a decision of 16 MiB runs made the next one see
        // 16 MiB a request, shrink to 1 MiB, see 1 MiB a request, and grow again, one request after another.
        try await withThrowingTaskGroup(of: (AnsweredRequest, Int).self) { group in
            while true {
                // A stream frees first, then the work is formed: a run takes the run length decided by the request
                // that just ended, not the one current before the wait (on a link whose rate swings, the lag kept
                // every request at one part while the decisions rose to 16).
                while !self.mayStartRequest, let (sent, bytes) = try await group.next() {
                    self.state?.machine.requestEnded(bytes: bytes)
                    try await self.settle(sent)
                }
                try Task.checkCancellation()
                guard let work = try self.nextRequest() else { break }
                switch work {
                case .part(let part):
                    let bytes = Int(part.length)
                    self.state?.machine.requestStarted(bytes: bytes)
                    group.addTask {
                        let sent = try await self.send(
                            part, to: remote, tracker: tracker, idempotency: idempotency, emit: emit)
                        return (.part(sent), bytes)
                    }
                case .parity(let shard, let via):
                    let bytes = Int(shard.length)
                    self.state?.machine.requestStarted(bytes: bytes)
                    group.addTask { (try await self.sendParity(shard, via: via, to: remote, emit: emit), bytes) }
                case .run(let parts, let via):
                    let runLength = self.runLengthNow
                    let bytes = Int(parts.reduce(Int64(0)) { $0 + $1.length })
                    self.state?.machine.requestStarted(bytes: bytes)
                    group.addTask {
                        let sent = try await self.send(
                            run: parts, via: via, to: remote, length: runLength, tracker: tracker,
                            idempotency: idempotency, emit: emit)
                        return (sent, bytes)
                    }
                }
            }
            while let (sent, bytes) = try await group.next() {
                self.state?.machine.requestEnded(bytes: bytes)
                try Task.checkCancellation()
                try await self.settle(sent)
            }
        }
        try Task.checkCancellation()
        guard let run = state else { throw UploaderError(.cancelled, "the upload stopped") }
        return try await complete(run, size: size, plan: plan, report: report, emit: emit)
    }

    private var mayStartRequest: Bool { state?.machine.mayStartRequest ?? false }

    private var runLengthNow: RunLength { state?.runLength ?? RunLength(1) }

    /// Records an acknowledged request: snapshot, counters, scheduler measurement and decision, events.
    private func settle(_ work: AnsweredRequest) async throws {
        switch work {
        case .parity(let bytes): state?.machine.parityAcknowledged(bytesOnWire: bytes)
        case .part(let part): try await settle(part: part)
        case .run(let parts):
            // One snapshot for the run: saved per part, its encoding (every acknowledged part so far) made the
            // client's CPU grow with the square of the part count (47 % of it for 1,024 parts of 1 MiB).
            for part in parts { try await settle(part: part, save: false) }
            if let run = state { try await resume.save(run.machine.snapshot) }
        }
    }

    /// One acknowledged part through the machine: its bookkeeping and measurement, then the link planner's decision
    /// for the bytes still in flight, then the snapshot and the events.
    private func settle(part sent: SentPart, save: Bool = true) async throws {
        guard var run = state else { return }
        let measured = run.machine.partAcknowledged(sent, now: clock.monotonicSeconds())
        state = run
        try await perform(measured, run)
        var next = run.machine.decision
        var predicted = 0.0
        var planned = false
        if let (plan, decision) = plannedRequests(inFlightBytes: run.machine.inFlightBytes),
            let inputs = linkPlanning.current
        {
            next.tier = decision.strategy.tier
            predicted = decision.predictedBitsPerSecond
            if configuration.flags.adaptiveChunking {
                next.parallel = min(run.parallelLimit, streams(of: plan, inputs: inputs))
                next.runParts = Self.parts(of: plan, inputs: inputs)
                planned = true
            }
        }
        next.resourceLevel = resourceLevel
        let actions = run.machine.settled(
            sent.receipt, next: next, planned: planned, predictedBitsPerSecond: predicted, save: save)
        state = run
        try await perform(actions, run)
    }

    /// Does what the transfer machine asked, in order, with `run`'s progress layers and event sink.
    private func perform(_ actions: [TransferStateMachine.Action], _ run: RunState) async throws {
        for action in actions {
            switch action {
            case .trackAcknowledged(let bytes, let verified):
                emitValves(run.tracker.acknowledged(UInt64(bytes), merkleVerified: verified), run.emit)
            case .measure(let bytes, let seconds, let time):
                scheduler.record(BandwidthMeasurement(bytes: Int(bytes), duration: seconds, timestamp: time))
            case .limitStreams(let streams): linkPlanning.gate.setLimit(streams)
            case .setRunParts(let parts): run.runLength.set(parts)
            case .saveSnapshot(let snapshot): try await resume.save(snapshot)
            case .auditAcknowledged(let index): telemetry?.audit(.chunkAcknowledged, chunkIndex: index)
            case .emit(let event): run.emit(event)
            case .emitProgress: run.emit(.progress(run.machine.progress(run.tracker.sample())))
            }
        }
    }

}

extension ChunkedUploader {
    /// The audit entry of a failed run: a verification failure, a pause, or another failure by its code.
    static func audit(failure error: UploaderError, telemetry: TelemetryRecorder?) {
        switch error.code {
        case .verificationFailed: telemetry?.audit(.verificationFailed, errorCode: "\(error.code)")
        case .cancelled: telemetry?.audit(.cancelled)
        case .snapshotDamaged: telemetry?.audit(.snapshotDamaged, errorCode: "\(error.code)")
        default: telemetry?.audit(.cancelled, errorCode: "\(error.code)")
        }
    }
}
