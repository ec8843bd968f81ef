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

/// The parts of one run still to acknowledge, across attempts (the retry closure is `@Sendable`).
final class RunProgress: Sendable {
    private struct State {
        var pending: [PartToSend]
        var receipts: [PartReceipt] = []
        var sends: [Int: Int] = [:]
        /// An attempt is out whose outcome is not known (it threw, or is running).
        var unknown = false
    }

    private let state: Mutex<State>

    init(_ parts: [PartToSend]) { state = Mutex(State(pending: parts)) }

    /// Whether the previous attempt ended without an answer (a reset): the destination may hold part of the run.
    var previousAttemptUnanswered: Bool { state.withLock { $0.unknown } }

    /// The parts for the next request: the whole run on the first attempt, afterwards at most `limit` of the parts
    /// not yet acknowledged (the run length decided now). Each is counted as sent once more.
    func nextAttempt(limit: Int) -> [PartToSend] {
        state.withLock { state in
            let first = state.sends.isEmpty
            state.unknown = true
            let parts = first ? state.pending : Array(state.pending.prefix(max(1, limit)))
            for part in parts { state.sends[part.index, default: 0] += 1 }
            return parts
        }
    }

    /// Takes `receipts` (a prefix of the pending parts, in order).
    func acknowledge(_ receipts: [PartReceipt]) {
        state.withLock { state in
            state.unknown = false
            state.receipts += receipts
            state.pending.removeFirst(min(receipts.count, state.pending.count))
        }
    }

    /// Takes the pending parts, from the first, that `progress` says the destination holds (the receiver stores a
    /// run's chunks in order, an IETF or tus server its bytes); returns their bytes.
    func acknowledgeHeld(_ progress: RemoteProgress) -> Int64 {
        state.withLock { state in
            var held = 0
            var bytes: Int64 = 0
            for part in state.pending {
                let holds: Bool
                switch progress {
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
            return bytes
        }
    }

    /// `parts` were not sent after all: the attempt's connection was refused (`UnsentAttempts.sentNothing`), so
    /// the destination got nothing and none of their bytes count as sent.
    func unsent(_ parts: [PartToSend]) {
        state.withLock { state in
            state.unknown = false
            for part in parts { state.sends[part.index, default: 1] -= 1 }
        }
    }

    var isDone: Bool { state.withLock { $0.pending.isEmpty } }

    var receipts: [PartReceipt] { state.withLock { $0.receipts } }

    func sends(of index: Int) -> Int { state.withLock { $0.sends[index] ?? 1 } }
}

extension ChunkedUploader {
    /// The backend that sends runs of this upload and the most parts one run may hold; nil when runs are off
    /// (S3, tus concatenation, a backend without runs, adaptive chunking off, `chunkSize` fixing every request).
    func runSender(for remote: RemoteUpload, extras: RunExtras) -> (any RunSendingBackend, Int)? {
        guard configuration.flags.adaptiveChunking, configuration.chunkSize == nil,
            let sender = extras.plain as? any RunSendingBackend
        else { return nil }
        let maximum = sender.maximumRunParts(of: remote)
        return maximum > 1 ? (sender, maximum) : nil
    }

    /// The next part, and when runs are on, the consecutive unacknowledged parts after it up to the current run
    /// length (parity shards waiting go first, as in `nextWork`).
    func nextWorkOrRun() throws -> Work? {
        guard let work = try nextWork() else { return nil }
        guard case .part(let first) = work, let run = state, let (sender, _) = run.runSender, run.runParts > 1
        else { return work }
        let planned = RunPlanner.run(
            from: first.index, length: run.runParts, partCount: run.snapshot.partCount,
            isAcknowledged: { run.acknowledged[$0] != nil })
        var parts = [first]
        while parts.count < planned.count, state?.pendingParityIsEmpty ?? false,
            let part = try nextPart()
        {
            parts.append(part)
            // nextPart skips acknowledged parts; the plan stops before them, so this holds unless the file changed.
            guard part.index == first.index + parts.count - 1 else { break }
        }
        return parts.count == 1 ? work : .run(parts, sender)
    }

    /// Sends one run with retries; after a failure part way, only the parts not yet acknowledged are sent again.
    nonisolated func send(
        run parts: [PartToSend], via sender: any RunSendingBackend, to remote: RemoteUpload, length: RunLength,
        tracker: MultiLayerProgressTracker, idempotency: ChunkIdempotencyManager,
        emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> SentWork {
        let total = parts.reduce(Int64(0)) { $0 + $1.length }
        if let pacer { try await pacer.admit(total) }
        let start = clock.monotonicSeconds()
        let progress = RunProgress(parts)
        let telemetry = self.telemetry
        let clock = self.clock
        // The planned run goes in one request; what a failure leaves of it is sent in requests of the run length
        // decided by then (the link may have changed: a reset on a slow link must not resend a long run whole).
        while !progress.isDone {
            _ = try await withRetries(index: parts[0].index, slot: total, emit: emit) {
                () async throws(TransportError) in
                // After a reset the run may be stored in part: ask what the destination holds, send only the rest.
                if progress.previousAttemptUnanswered {
                    let held = progress.acknowledgeHeld(try await sender.progress(of: remote))
                    // Their bytes reached the destination after all (the failed attempt took them back from the wire).
                    if held > 0 { for event in tracker.wireSent(UInt64(held)) { emit(.safetyValve(event)) } }
                    if progress.isDone { return }
                }
                // A retry takes the run length planned now: after a cut the interruption it was is known.
                if progress.previousAttemptUnanswered, configuration.flags.adaptiveChunking,
                    let (plan, _) = plannedRequests(), let inputs = linkPlanning.current
                {
                    length.set(Self.parts(of: plan, inputs: inputs))
                }
                let pending = progress.nextAttempt(limit: length.current)
                let started = clock.monotonicSeconds()
                let outcome: RunOutcome
                do throws(TransportError) {
                    outcome = try await Self.attempt(
                        run: pending, to: remote, sender: sender, tracker: tracker, idempotency: idempotency,
                        telemetry: telemetry, interruptions: interruptions, clock: clock, emit: emit)
                } catch {
                    if UnsentAttempts.sentNothing(error.code) { progress.unsent(pending) }
                    throw error
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
                let sends = Int64(max(1, progress.sends(of: pair.1.index)))
                return SentPart(
                    receipt: pair.0, sha256: pair.1.sha256, crc32c: pair.1.crc32c, seconds: seconds,
                    bytesOnWire: sends * pair.1.length, attempts: Int(sends), measuredBytes: position == 0 ? total : 0)
            })
    }

    /// One request carrying `parts`, with a fresh `Idempotency-Key` per part and the wire layer kept in step; one
    /// trace line per request, naming its first part and its size.
    private static func attempt(
        run parts: [PartToSend], to remote: RemoteUpload, sender: any RunSendingBackend,
        tracker: MultiLayerProgressTracker, idempotency: ChunkIdempotencyManager, telemetry: TelemetryRecorder?,
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
        for event in tracker.wireSent(UInt64(bytes)) { emit(.safetyValve(event)) }
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
                    uploadID: "", index: parts[0].index, offset: parts[0].offset, length: Int(bytes),
                    attempt: attemptNumber, startedAtMs: started,
                    durationMs: Int64(((clock.monotonicSeconds() - start) * 1000).rounded()), outcome: outcome,
                    errorCode: error.map { "\($0.code)" },
                    transportProtocol: http.map { TransportProtocol(measured: $0) },
                    connectionReused: http?.connectionReused, pathChanges: nil,
                    rttMicroseconds: interruptions.roundTripTime.map { Int64($0 * 1e6) }, requestParts: parts.count,
                    congestionControl: http?.congestionControl))
        }
        let outcome: RunOutcome
        do {
            let sent: Result<RunOutcome, TransportError> = await HTTPTelemetryObserver.$current.withValue(observer) {
                do throws(TransportError) {
                    return .success(try await sender.send(run: uploads, to: remote))
                } catch {
                    return .failure(error)
                }
            }
            outcome = try sent.get()
        } catch {
            for key in keys { idempotency.release(key) }
            for event in tracker.wireFailed(UInt64(bytes)) { emit(.safetyValve(event)) }
            trace(error.code == .cancelled ? .cancelled : (isRetryable(error.code) ? .retried : .failed), error)
            throw error
        }
        let acknowledged = min(outcome.receipts.count, parts.count)
        for key in keys[..<acknowledged] { idempotency.complete(key) }
        for key in keys[acknowledged...] { idempotency.release(key) }
        let unacknowledged = parts[acknowledged...].reduce(Int64(0)) { $0 + $1.length }
        if unacknowledged > 0 {
            for event in tracker.wireFailed(UInt64(unacknowledged)) { emit(.safetyValve(event)) }
        }
        if let stopped = outcome.stoppedBy {
            trace(isRetryable(stopped.code) ? .retried : .failed, stopped)
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
        guard configuration.flags.adaptiveChunking, backend is any RunSendingBackend else { return false }
        if let native = backend as? NativeBackend { return native.server.maximumRun > 1 }
        return true
    }
}

extension Int64 {
    /// This preferred part size, or the small run unit when the upload takes runs.
    func runUnit(takesRuns: Bool) -> Int64 { takesRuns ? Swift.min(self, RunPlanner.unitBytes) : self }
}
