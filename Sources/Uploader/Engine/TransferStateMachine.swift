import AetherIO
import AetherScheduling
import AetherTransport

/// The bookkeeping of one transfer as a pure state machine, driven by `ChunkedUploader` (the shape of
/// async-http-client's `Transaction` over `Transaction.StateMachine`): the owner reads, sends, sleeps and saves;
/// the machine takes what happened (a part read, a request started or answered, a part acknowledged, the link
/// planner's new decision) and answers with what to do (record a measurement, save the snapshot, limit the
/// streams, emit an event). It holds the snapshot with its acknowledged parts, the byte counters, the decision in
/// force (tier, streams, parts per request, device level) and the requests in flight. No I/O, no clock: the owner
/// passes the monotonic time, so the machine's tests need no upload.
struct TransferStateMachine: Sendable {
    /// What the link planner decided for the next requests.
    struct Decision: Sendable, Hashable {
        var tier: NetworkSpeedTier
        /// Requests in flight at once.
        var parallel: Int
        /// Parts one request carries.
        var runParts: Int
        /// The device's degradation level the decision was capped by.
        var resourceLevel = DegradationLevel.normal
    }

    /// What the owner does, in order.
    enum Action: Sendable {
        /// The progress layers learn that `bytes` were acknowledged (checked by the destination or not).
        case trackAcknowledged(bytes: Int64, verified: Bool)
        /// The scheduler learns the link's rate: `bytes` acknowledged over `seconds`, at `time`.
        case measure(bytes: Int64, seconds: Double, time: Double)
        /// At most this many requests in flight from now on (the stream gate).
        case limitStreams(Int)
        /// Parts per request from now on, for the sends that form runs.
        case setRunParts(Int)
        /// The snapshot to save.
        case saveSnapshot(ResumeSnapshot)
        /// An audit entry for the acknowledged part.
        case auditAcknowledged(index: Int)
        /// An event to emit.
        case emit(UploadEvent)
        /// A progress event from the counters and the progress layers' sample.
        case emitProgress
    }

    private(set) var snapshot: ResumeSnapshot
    /// Parts the destination holds: acknowledged in this run, or found there by the resume plan.
    private(set) var acknowledged: [Int: PartReceipt]
    private(set) var counters: Counters
    private(set) var decision: Decision
    /// Attempts of this run's parts: with `RetryPolicy.answeredFailures`, the loss rate the parity decision reads.
    private(set) var attempts = 0
    /// Parts read to be sent in this run.
    private(set) var partsSent = 0
    /// Parity shards the destination acknowledged.
    private(set) var parityShardsSent = 0
    /// Requests in flight and the bytes they carry.
    private(set) var inFlight = 0
    private(set) var inFlightBytes = 0
    /// The recent acknowledgements, for the link's rate.
    private var acknowledgements = AcknowledgementWindow()
    /// Whether the destination checks every part's checksum itself (an acknowledgement is then verified).
    private let destinationChecksParts: Bool

    init(
        snapshot: ResumeSnapshot, acknowledged: [Int: PartReceipt], counters: Counters, decision: Decision,
        destinationChecksParts: Bool
    ) {
        self.snapshot = snapshot
        self.acknowledged = acknowledged
        self.counters = counters
        self.decision = decision
        self.destinationChecksParts = destinationChecksParts
    }

    /// Whether another request may start: fewer in flight than the decision's streams.
    var mayStartRequest: Bool { inFlight < decision.parallel }

    /// Whether the destination holds part `index` already.
    func holds(_ index: Int) -> Bool { acknowledged[index] != nil }

    /// A request of `bytes` started.
    mutating func requestStarted(bytes: Int) {
        inFlight += 1
        inFlightBytes += bytes
    }

    /// A request of `bytes` ended (answered; a failure ends the transfer).
    mutating func requestEnded(bytes: Int) {
        inFlight -= 1
        inFlightBytes -= bytes
    }

    /// A part of `length` bytes was read to be sent (not one the destination holds).
    mutating func partRead(length: Int64) {
        counters.sent += length
        partsSent += 1
    }

    /// A parity shard was acknowledged after `bytesOnWire` were sent for it.
    mutating func parityAcknowledged(bytesOnWire: Int64) {
        counters.runBytes += bytesOnWire
        parityShardsSent += 1
    }

    /// The destination acknowledged `sent` at `now`: the snapshot and counters take it, and the link's rate over
    /// the part's send time is measured (every byte acknowledged in that window, whichever stream carried it: one
    /// stream's rate underestimates the link by the stream count; a run's parts are measured once, as one request
    /// of the run's bytes, which its first part carries).
    mutating func partAcknowledged(_ sent: SentPart, now: Double) -> [Action] {
        let receipt = sent.receipt
        attempts += sent.attempts
        acknowledged[receipt.index] = receipt
        snapshot.acknowledged[receipt.index] = ResumeSnapshot.AcknowledgedPart(
            receipt: receipt, sha256: sent.sha256.hex)
        counters.acknowledged += receipt.length
        counters.runBytes += sent.bytesOnWire
        let verified = destinationChecksParts || receipt.checksumCRC32C == sent.crc32c
        if verified { counters.verified += receipt.length }
        var actions: [Action] = [.trackAcknowledged(bytes: receipt.length, verified: verified)]
        let measured = sent.measuredBytes ?? receipt.length
        if measured > 0 {
            acknowledgements.record(bytes: measured, at: now)
            let sample = acknowledgements.sample(now: now, window: sent.seconds)
            if sample.seconds > 0 { actions.append(.measure(bytes: sample.bytes, seconds: sample.seconds, time: now)) }
        }
        return actions
    }

    /// The link planner's decision after an acknowledgement (`planned`: a plan was applied, so the stream gate
    /// takes its stream count), then the acknowledgement `receipt` is announced: the snapshot saved when
    /// `save` (a run saves once, after its last part), a tier event when anything changed, the audit entry, the
    /// acknowledgement and the progress. `predictedBitsPerSecond` goes into the tier event.
    mutating func settled(
        _ receipt: PartReceipt, next: Decision, planned: Bool, predictedBitsPerSecond: Double, save: Bool
    ) -> [Action] {
        let changed = next != decision
        decision = next
        var actions: [Action] = planned ? [.limitStreams(next.parallel)] : []
        actions.append(.setRunParts(next.runParts))
        if save { actions.append(.saveSnapshot(snapshot)) }
        if changed { actions.append(.emit(.tierChanged(tierReport(predictedBitsPerSecond: predictedBitsPerSecond)))) }
        actions.append(.auditAcknowledged(index: receipt.index))
        actions.append(.emit(.chunkAcknowledged(receipt)))
        actions.append(.emitProgress)
        return actions
    }

    /// The decision in force as a tier event.
    func tierReport(predictedBitsPerSecond: Double) -> TierReport {
        TierReport(
            tier: decision.tier, chunkSize: snapshot.partSize, parallelism: decision.parallel,
            predictedBitsPerSecond: predictedBitsPerSecond,
            requestSize: Int64(decision.runParts) * snapshot.partSize, resourceLevel: decision.resourceLevel)
    }

    /// The byte counters and the progress layers' sample as a progress event.
    func progress(_ sample: ProgressLayers.Snapshot) -> UploadProgress {
        counters.progress(sample, tier: decision.tier)
    }
}
