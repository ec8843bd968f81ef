import AetherIO
import AetherIntegrity
import AetherScheduling
public import AetherTransport

/// Sending: one attempt at a part with its idempotency key, telemetry and progress layers; a part's sends under the
/// retry policy and the link planner's gate.
extension ChunkedUploader {
    /// One attempt at sending `part`, with a fresh `Idempotency-Key` (never one of an earlier run: the journal
    /// keeps the attempt watermark) and the progress tracker's wire layer kept in step.
    static func attempt(
        _ part: PartToSend, to remote: RemoteUpload, backend: any UploadBackend, tracker: ProgressLayers,
        idempotency: ChunkIdempotencyManager, telemetry: TelemetryRecorder?, interruptions: InterruptionLog,
        clock: any AetherClock, emit: @Sendable (UploadEvent) -> Void
    ) async throws(TransportError) -> PartReceipt {
        try await idempotency.attempt(index: part.index, chunkHash: part.sha256) {
            (key, attemptNumber) async throws(TransportError) -> PartReceipt in
            let upload = UploadPart(
                index: part.index, offset: part.offset, body: part.body, length: part.length, sha256: part.sha256,
                crc32c: part.crc32c, chainLink: part.link, idempotencyKey: key)
            emitValves(tracker.wireSent(UInt64(part.length)), emit)
            let attemptTrace = AttemptTrace(clock: clock)
            func trace(_ outcome: ChunkOutcome, _ error: TransportError? = nil) {
                attemptTrace.ended(
                    outcome, error, index: part.index, offset: part.offset, length: part.length,
                    attempt: attemptNumber, telemetry: telemetry, interruptions: interruptions)
            }
            let sent: Result<PartReceipt, TransportError> = await HTTPTelemetryObserver.$current.withValue(
                attemptTrace.observer
            ) {
                do throws(TransportError) {
                    return .success(try await backend.send(upload, to: remote))
                } catch {
                    return .failure(error)
                }
            }
            switch sent {
            case .success(let receipt):
                trace(.acknowledged)
                return receipt
            case .failure(let error):
                emitValves(tracker.wireFailed(UInt64(part.length)), emit)
                trace(
                    error.code == .cancelled
                        ? .cancelled : (RetryPolicy.isRetryable(error.code) ? .retried : .failed), error)
                throw error
            }
        }
    }

    /// Emits the progress layers' safety-valve events.
    static func emitValves(_ events: [ProgressLayers.Event], _ emit: @Sendable (UploadEvent) -> Void) {
        for event in events { emit(.safetyValve(event)) }
    }

    nonisolated func emitValves(_ events: [ProgressLayers.Event], _ emit: @Sendable (UploadEvent) -> Void) {
        Self.emitValves(events, emit)
    }

    /// Sends one part with retries; returns once it is acknowledged.
    nonisolated func send(
        _ part: PartToSend, to remote: RemoteUpload, tracker: ProgressLayers,
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

    /// Runs `operation` under the upload's retry policy (`RetryPolicy.withRetries`); with `slot`, each attempt
    /// first passes the link planner's gate for that many bytes (`admitAttempt`) and gives the slot back after.
    nonisolated func withRetries<T: Sendable>(
        index: Int, slot: Int64? = nil, emit: @Sendable (UploadEvent) -> Void,
        _ operation: @Sendable () async throws(TransportError) -> T
    ) async throws -> (T, Int) {
        let gate = linkPlanning.gate
        let attemptSlot = slot.map { bytes in
            RetryPolicy.Slot(
                acquire: { try await self.admitAttempt(bytes: bytes) }, release: { gate.release(bytes: bytes) })
        }
        return try await retries.withRetries(index: index, slot: attemptSlot, emit: emit, operation)
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
