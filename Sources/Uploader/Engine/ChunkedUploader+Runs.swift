import AetherIO
import AetherSecurity
import AetherTransport
import Synchronization

/// What one request acknowledged: its first part, how many parts it carried and its size (the request size that
/// follows the link, `--json` event `request`).
public struct RequestReport: Sendable, Hashable {
    /// The index of the request's first part.
    public let index: Int
    /// Parts the request carried.
    public let parts: Int
    /// Bytes the request carried.
    public let bytes: Int64
    /// Seconds from the first attempt until the last part was acknowledged.
    public let seconds: Double
}

/// The run length decided now, read by sends in flight (a run cut part way sends its rest in runs of this length).
final class RunLength: Sendable {
    private let value: Mutex<Int>

    init(_ parts: Int) { value = Mutex(parts) }

    var current: Int { value.withLock { $0 } }

    func set(_ parts: Int) { value.withLock { $0 = parts } }
}

/// The parts of one run still to acknowledge, across attempts (the retry closure is `@Sendable`), and where the next
/// attempt starts in the first of them: the received prefix the destination keeps of it after a cut
/// (`docs/PROTOCOL.md` 3.2.2), learned from its holdings or from a `409 partial-mismatch`.
final class RunProgress: Sendable {
    private struct State {
        var pending: [PartToSend]
        var receipts: [PartReceipt] = []
        /// Attempts that carried each part.
        var sends: [Int: Int] = [:]
        /// Bytes of each part the attempts carried (a continuation carries its first part from `from` on).
        var carried: [Int: Int64] = [:]
        /// An attempt is out whose outcome is not known (it threw, or is running).
        var unknown = false
        /// Where the next attempt starts in the first pending part (0: whole).
        var from: Int64 = 0
        /// The prefix of the first pending part the destination last said it holds, to tell progress from none.
        var known: (index: Int, bytes: Int64)?
        /// Continuations of the first pending part refused because the destination holds another prefix.
        var refusals = 0
    }

    private let state: Mutex<State>

    init(_ parts: [PartToSend]) { state = Mutex(State(pending: parts)) }

    /// Whether the previous attempt ended without an answer (a reset): the destination may hold part of the run.
    var previousAttemptUnanswered: Bool { state.withLock { $0.unknown } }

    /// The parts for the next request and where it starts in the first: the whole run on the first attempt,
    /// afterwards at most `limit` of the parts not yet acknowledged (the run length decided now), from the prefix of
    /// the first that the destination holds (once: a later attempt starts whole unless told again). Each part is
    /// counted as sent once more, with the bytes the request carries of it.
    func nextAttempt(limit: Int) -> (parts: [PartToSend], from: Int64) {
        state.withLock { state in
            let first = state.sends.isEmpty
            state.unknown = true
            let parts = first ? state.pending : Array(state.pending.prefix(max(1, limit)))
            let from = parts.isEmpty ? 0 : state.from
            state.from = 0
            for (position, part) in parts.enumerated() {
                state.sends[part.index, default: 0] += 1
                state.carried[part.index, default: 0] += part.length - (position == 0 ? from : 0)
            }
            return (parts, from)
        }
    }

    /// Takes `receipts` (a prefix of the pending parts, in order).
    func acknowledge(_ receipts: [PartReceipt]) {
        state.withLock { state in
            state.unknown = false
            state.receipts += receipts
            state.pending.removeFirst(min(receipts.count, state.pending.count))
            if !receipts.isEmpty {
                state.known = nil
                state.refusals = 0
            }
        }
    }

    /// Takes the pending parts, from the first, that `holdings` says the destination holds (the receiver stores a
    /// run's chunks in order, an IETF or tus server its bytes), and with `continues` the prefix it keeps of the next
    /// one, where the next attempt then starts. Returns the held parts' bytes, and whether the destination gained
    /// bytes of this run since it was last asked (parts, or a longer prefix).
    func acknowledgeHeld(_ holdings: RunHoldings, continues: Bool) -> (bytes: Int64, gained: Bool) {
        state.withLock { state in
            var held = 0
            var bytes: Int64 = 0
            for part in state.pending {
                let holds: Bool
                switch holdings.progress {
                case .offset(let offset, _): holds = part.offset + part.length <= offset
                case .chunks(let indices, let complete): holds = complete || indices.contains(part.index)
                case .parts(let receipts): holds = receipts.contains { $0.index == part.index }
                case .gone: holds = false
                }
                guard holds else { break }
                state.receipts.append(PartReceipt(index: part.index, length: part.length))
                held += 1
                bytes += part.length
            }
            state.pending.removeFirst(held)
            state.unknown = false
            var gained = held > 0
            if held > 0 {
                state.known = nil
                state.refusals = 0
            }
            state.from = 0
            if continues, let part = state.pending.first, let prefix = holdings.prefixes[part.index], prefix > 0,
                prefix < part.length
            {
                state.from = prefix
                if let known = state.known, known.index == part.index {
                    gained = gained || prefix > known.bytes
                } else {
                    gained = true
                }
                state.known = (part.index, prefix)
            }
            return (bytes, gained)
        }
    }

    /// A continuation was refused before its body: the destination holds `prefix` bytes of the first pending part.
    /// The next attempt starts there the first time, and whole after a second refusal.
    func prefixRefused(_ prefix: Int64) {
        state.withLock { state in
            state.unknown = false
            state.refusals += 1
            state.from = 0
            guard let part = state.pending.first, state.refusals == 1, prefix > 0, prefix < part.length else { return }
            state.from = prefix
            state.known = (part.index, prefix)
        }
    }

    /// `parts` were not sent after all (from `from` in the first): the attempt's connection was refused
    /// (`UnsentAttempts.sentNothing`), so the destination got nothing and none of their bytes count as sent. The
    /// next attempt starts where this one would have.
    func unsent(_ parts: [PartToSend], from: Int64) {
        state.withLock { state in
            state.unknown = false
            state.from = from
            for (position, part) in parts.enumerated() {
                state.sends[part.index, default: 1] -= 1
                state.carried[part.index, default: 0] -= part.length - (position == 0 ? from : 0)
            }
        }
    }

    var isDone: Bool { state.withLock { $0.pending.isEmpty } }

    var receipts: [PartReceipt] { state.withLock { $0.receipts } }

    func sends(of index: Int) -> Int { state.withLock { $0.sends[index] ?? 1 } }

    /// The bytes of part `index` the attempts carried (at least `length`: an acknowledged part crossed whole once).
    func carried(of index: Int, length: Int64) -> Int64 { state.withLock { max(length, $0.carried[index] ?? 0) } }
}

extension ChunkedUploader {
    /// The backend that sends runs of this upload and the most parts one run may hold; nil when runs are off
    /// (S3, tus concatenation, a backend without runs, adaptive chunking off, `chunkSize` fixing every request).
    func runSender(for remote: RemoteUpload, variants: SendVariants) -> (any RunSendingBackend, Int)? {
        guard configuration.flags.adaptiveChunking, configuration.chunkSize == nil,
            let sender = variants.plain.features.runs
        else { return nil }
        let maximum = sender.maximumRunParts(of: remote)
        return maximum > 1 ? (sender, maximum) : nil
    }

    /// The next part, and when runs are on, the consecutive unacknowledged parts after it up to the current run
    /// length (parity shards waiting go first, as in `nextPartOrParity`).
    func nextRequest() throws -> PlannedRequest? {
        guard let work = try nextPartOrParity() else { return nil }
        guard case .part(let first) = work, let run = state, let (sender, _) = run.runSender else { return work }
        // A lone part goes as a run of one to a destination that keeps a cut part's prefix: a cut then costs only
        // what was in flight (the run retry continues from the prefix), on its own variant (compression kept).
        let lone: PlannedRequest =
            sender.continuesCutParts(of: run.machine.snapshot.remote)
            ? first.via.features.runs.map { .run([first], $0) } ?? work : work
        guard run.machine.decision.runParts > 1 else { return lone }
        let planned = RunPlanner.run(
            from: first.index, length: run.machine.decision.runParts, partCount: run.machine.snapshot.partCount,
            isAcknowledged: { run.machine.holds($0) })
        var parts = [first]
        while parts.count < planned.count, state?.pendingParityIsEmpty ?? false,
            let part = try nextPart()
        {
            parts.append(part)
            // nextPart skips acknowledged parts; the plan stops before them, so this holds unless the file changed.
            guard part.index == first.index + parts.count - 1 else { break }
        }
        return parts.count == 1 ? lone : .run(parts, sender)
    }

    /// Sends one run with retries; after a failure part way, only the parts not yet acknowledged are sent again, and
    /// to a destination that keeps a cut part's prefix, the first of them from that prefix on (a continuation). While
    /// the destination gains bytes between cuts, the retries start afresh: a slow link reset often still finishes.
    nonisolated func send(
        run parts: [PartToSend], via sender: any RunSendingBackend, to remote: RemoteUpload, length: RunLength,
        tracker: ProgressLayers, idempotency: ChunkIdempotencyManager,
        emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> AnsweredRequest {
        let total = parts.reduce(Int64(0)) { $0 + $1.length }
        if let pacer { try await pacer.admit(total) }
        let start = clock.monotonicSeconds()
        let progress = RunProgress(parts)
        let telemetry = self.telemetry
        let clock = self.clock
        let continues = sender.continuesCutParts(of: remote)
        // The planned run goes in one request; what a failure leaves of it is sent in requests of the run length
        // decided by then (the link may have changed: a reset on a slow link must not resend a long run whole).
        while !progress.isDone {
            _ = try await withRetries(index: parts[0].index, slot: total, emit: emit) {
                () async throws(TransportError) in
                // After a reset the run may be stored in part: ask what the destination holds, send only the rest.
                if progress.previousAttemptUnanswered {
                    let (held, gained) = progress.acknowledgeHeld(
                        try await sender.holdings(of: remote), continues: continues)
                    // Their bytes reached the destination after all (the failed attempt took them back from the wire).
                    if held > 0 { emitValves(tracker.wireSent(UInt64(held)), emit) }
                    if progress.isDone { return }
                    // A retry takes the run length planned now: after a cut the interruption it was is known. Planned
                    // here, once the holdings are in: asking them ends the attempt's unknown outcome, and a retry
                    // that starts afresh (below) would not see the cut any more.
                    if configuration.flags.adaptiveChunking, let (plan, _) = plannedRequests(),
                        let inputs = linkPlanning.current
                    {
                        length.set(Self.parts(of: plan, inputs: inputs))
                    }
                    // The link carried bytes of this run between the cuts: the retries (and their path wait) start
                    // afresh with the next attempt.
                    if gained { return }
                }
                let (pending, from) = progress.nextAttempt(limit: length.current)
                let started = clock.monotonicSeconds()
                let outcome: RunOutcome
                do throws(TransportError) {
                    outcome = try await Self.attempt(
                        run: pending, from: from, to: remote, sender: sender, tracker: tracker,
                        idempotency: idempotency, telemetry: telemetry, interruptions: interruptions, clock: clock,
                        emit: emit)
                } catch {
                    if UnsentAttempts.sentNothing(error.code) { progress.unsent(pending, from: from) }
                    throw error
                }
                if let held = outcome.heldPrefix {
                    // Refused before its body: the destination holds another prefix; the next attempt starts there
                    // (or whole, the second time).
                    progress.prefixRefused(held)
                    return
                }
                progress.acknowledge(outcome.receipts)
                if !outcome.receipts.isEmpty {
                    emit(
                        .requestAcknowledged(
                            RequestReport(
                                index: pending[0].index, parts: outcome.receipts.count,
                                bytes: outcome.receipts.reduce(Int64(0)) { $0 + $1.length },
                                seconds: clock.monotonicSeconds() - started)))
                }
                if let stopped = outcome.stoppedBy { throw stopped }
            }
        }
        let receipts = progress.receipts
        guard receipts.map(\.index) == parts.map(\.index), zip(receipts, parts).allSatisfy({ $0.length == $1.length })
        else {
            throw UploaderError(
                .transportFailed, "the destination acknowledged other parts than the run \(parts[0].index)...")
        }
        let seconds = clock.monotonicSeconds() - start
        return .run(
            zip(receipts, parts).enumerated().map { position, pair in
                let sends = max(1, progress.sends(of: pair.1.index))
                return SentPart(
                    receipt: pair.0, sha256: pair.1.sha256, crc32c: pair.1.crc32c, seconds: seconds,
                    bytesOnWire: progress.carried(of: pair.1.index, length: pair.1.length), attempts: sends,
                    measuredBytes: position == 0 ? total : 0)
            })
    }

    /// One request carrying `parts` (the first from byte `from` on: a continuation), with a fresh `Idempotency-Key`
    /// per part and the wire layer kept in step (a continuation's prefix counts as on the wire: it is at the
    /// destination); one trace line per request, naming where it starts and the bytes it carries.
    private static func attempt(
        run parts: [PartToSend], from: Int64, to remote: RemoteUpload, sender: any RunSendingBackend,
        tracker: ProgressLayers, idempotency: ChunkIdempotencyManager, telemetry: TelemetryRecorder?,
        interruptions: InterruptionLog, clock: any AetherClock, emit: @Sendable (UploadEvent) -> Void
    ) async throws(TransportError) -> RunOutcome {
        var keys: [IdempotencyKey] = []
        var uploads: [UploadPart] = []
        var attemptNumber = 0
        for part in parts {
            let key: IdempotencyKey
            do {
                (key, attemptNumber) = try idempotency.reserveNextAttempt(index: part.index, chunkHash: part.sha256)
            } catch {
                for key in keys { idempotency.release(key) }
                throw TransportError(.invalidArgument, "no idempotency key for part \(part.index): \(error.message)")
            }
            keys.append(key)
            uploads.append(
                UploadPart(
                    index: part.index, offset: part.offset, body: part.body, length: part.length, sha256: part.sha256,
                    crc32c: part.crc32c, chainLink: part.link, idempotencyKey: key.hex))
        }
        let bytes = parts.reduce(Int64(0)) { $0 + $1.length }
        emitValves(tracker.wireSent(UInt64(bytes)), emit)
        let attemptTrace = AttemptTrace(clock: clock)
        func trace(_ outcome: ChunkOutcome, _ error: TransportError? = nil) {
            attemptTrace.ended(
                outcome, error, index: parts[0].index, offset: parts[0].offset + from, length: bytes - from,
                attempt: attemptNumber, requestParts: parts.count, telemetry: telemetry, interruptions: interruptions)
        }
        let outcome: RunOutcome
        do {
            let sent: Result<RunOutcome, TransportError> = await HTTPTelemetryObserver.$current.withValue(
                attemptTrace.observer
            ) {
                do throws(TransportError) {
                    return .success(
                        from > 0
                            ? try await sender.send(run: uploads, from: from, to: remote)
                            : try await sender.send(run: uploads, to: remote))
                } catch {
                    return .failure(error)
                }
            }
            outcome = try sent.get()
        } catch {
            for key in keys { idempotency.release(key) }
            emitValves(tracker.wireFailed(UInt64(bytes)), emit)
            trace(
                error.code == .cancelled ? .cancelled : (RetryPolicy.isRetryable(error.code) ? .retried : .failed),
                error)
            throw error
        }
        let acknowledged = min(outcome.receipts.count, parts.count)
        for key in keys[..<acknowledged] { idempotency.complete(key) }
        for key in keys[acknowledged...] { idempotency.release(key) }
        let unacknowledged = parts[acknowledged...].reduce(Int64(0)) { $0 + $1.length }
        if unacknowledged > 0 {
            emitValves(tracker.wireFailed(UInt64(unacknowledged)), emit)
        }
        if let stopped = outcome.stoppedBy {
            trace(RetryPolicy.isRetryable(stopped.code) || outcome.heldPrefix != nil ? .retried : .failed, stopped)
        } else {
            trace(.acknowledged)
        }
        return outcome
    }
}

extension ChunkedUploader {
    /// Whether a fresh upload is laid out in small parts sent in runs: adaptive chunking on and a backend that takes
    /// runs. Loopback too: a relay on this machine may front any link, and a large part cut by a reset is lost whole
    /// where a run keeps every part finished before the cut.
    func takesRuns() -> Bool {
        guard configuration.flags.adaptiveChunking, backend.features.runs != nil else { return false }
        return backend.features.native.map { $0.server.maximumRun > 1 } ?? true
    }
}

extension Int64 {
    /// This preferred part size, or the small run unit when the upload takes runs.
    func runUnit(takesRuns: Bool) -> Int64 { takesRuns ? Swift.min(self, RunPlanner.unitBytes) : self }
}
