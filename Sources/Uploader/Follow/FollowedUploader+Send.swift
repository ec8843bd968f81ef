import AetherIO
import AetherIntegrity
import AetherScheduling
import AetherSecurity
import AetherTransport

extension FollowedUploader {
    /// Sends one part with retries (a fresh `Idempotency-Key` per attempt), then records the acknowledgement. A
    /// failure is kept so that the follower stops at its next look, even while it waits for the file to grow.
    nonisolated func sendAndSettle(
        _ part: FollowPart, idempotency: ChunkIdempotencyManager, emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws {
        do {
            let backend = self.backend
            let (receipt, attempts) = try await retries.withRetries(index: part.index, emit: emit) {
                () async throws(TransportError) -> PartReceipt in
                try await idempotency.attempt(index: part.index, chunkHash: part.sha256) {
                    (key, _) async throws(TransportError) -> PartReceipt in
                    try await backend.send(
                        UploadPart(
                            index: part.index, offset: part.offset, body: .bytes(part.bytes), length: part.length,
                            sha256: part.sha256, crc32c: part.crc32c, chainLink: part.link, idempotencyKey: key),
                        to: part.remote)
                }
            }
            guard receipt.index == part.index, receipt.length == part.length else {
                throw UploaderError(
                    .transportFailed,
                    "the destination acknowledged part \(receipt.index) of \(receipt.length) bytes for part "
                        + "\(part.index)")
            }
            try await settle(part, receipt: receipt, attempts: attempts)
        } catch {
            await keep(error)
            throw error
        }
    }

    private func keep(_ error: any Error) {
        if run?.failure == nil { run?.failure = error }
    }

    /// Records an acknowledged part: receipts, counters, the snapshot (saved now), events.
    private func settle(_ part: FollowPart, receipt: PartReceipt, attempts: Int) throws {
        guard var current = run else { return }
        current.acknowledged[part.index] = receipt
        current.snapshot.acknowledged[part.index] = ResumeSnapshot.AcknowledgedPart(
            receipt: receipt, sha256: part.sha256.hex)
        current.snapshot.partCount = max(current.snapshot.partCount, part.index + 1)
        current.snapshot.remote.size = max(current.snapshot.remote.size, part.offset + part.length)
        current.acknowledgedBytes += part.length
        current.runAcknowledgedBytes += part.length
        current.runBytes += part.length * Int64(attempts)
        run = current
        try snapshots.save(try current.snapshot.serialized(), key: snapshotKey)
        telemetry?.audit(.chunkAcknowledged, chunkIndex: part.index)
        current.emit(.chunkAcknowledged(receipt))
        current.emit(.progress(progress(current, following: true)))
    }

    /// Progress while following: the total is what the file held when last read; no share, no ETA.
    func progress(_ current: FollowRun, following: Bool) -> UploadProgress {
        let elapsed = max(clock.monotonicSeconds() - current.started, 1e-3)
        let total = max(current.readBytes, current.acknowledgedBytes)
        return UploadProgress(
            totalBytes: total, sentBytes: current.sentBytes, acknowledgedBytes: current.acknowledgedBytes,
            verifiedBytes: current.acknowledgedBytes,
            bytesPerSecond: Double(current.runAcknowledgedBytes) / elapsed,
            tier: NetworkSpeedTier(loopback: target.isLoopback),
            displayedFraction: following ? 0 : 1, secondsRemaining: following ? nil : 0, following: following)
    }

    /// Completes with the final size: every part acknowledged, the destination's receipt checked against the
    /// local size and digests, the snapshot removed.
    func complete(_ current: inout FollowRun, size: Int64, partCount: Int, resumed: Bool, report: ResumeReport)
        async throws -> UploadOutcome
    {
        guard (0..<partCount).allSatisfy({ current.acknowledged[$0] != nil }), current.ledger.count == partCount else {
            throw UploaderError(
                .fileChanged, "\(target.file) gave \(current.ledger.count) parts where \(partCount) were acknowledged")
        }
        let fileSHA = current.fileHash.finalize()
        let summary = current.ledger.summary
        var remote = current.snapshot.remote
        remote.size = size
        current.snapshot.remote = remote
        current.snapshot.partCount = partCount
        try snapshots.save(try current.snapshot.serialized(), key: snapshotKey)
        let completion = CompletionSummary(
            parts: (0..<partCount).compactMap { current.acknowledged[$0] }, fileSHA256: fileSHA,
            merkleRoot: summary.merkleRoot, chainHead: summary.chainHead)
        let backend = self.backend
        let finished = remote
        let (receipt, _) = try await retries.withRetries(index: -1, emit: current.emit) {
            () async throws(TransportError) in
            try await backend.complete(finished, summary: completion)
        }
        let checked = try ChunkedUploader.verify(
            receipt, size: size, sha256: fileSHA, merkleRoot: summary.merkleRoot, chainHead: summary.chainHead)
        try snapshots.remove(key: snapshotKey)
        snapshots.discardIdempotencyJournal(session: current.snapshot.chainSessionID)
        current.readBytes = size
        current.emit(.progress(progress(current, following: false)))
        telemetry?.audit(.verified)
        telemetry?.audit(.completed)
        telemetry?.finish(
            completed: true, resumed: resumed, totalBytes: UInt64(size),
            seconds: clock.monotonicSeconds() - current.started)
        let outcome = UploadOutcome(
            receipt: receipt, sha256: fileSHA, merkleRoot: summary.merkleRoot, chainHead: summary.chainHead,
            serverVerified: checked, partsSent: current.partsSent, bytesSent: current.runBytes, partCount: partCount,
            resume: report)
        current.emit(.completed(outcome))
        return outcome
    }
}
