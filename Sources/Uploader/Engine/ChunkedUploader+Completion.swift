import AetherIO
import AetherIntegrity
import AetherSecurity
import AetherTransport

/// Completion: after the last part, the Byzantine sample, the completion request under the retry policy, the
/// receipt checked against the local digests, the snapshot removed, the outcome.
extension ChunkedUploader {
    /// Completes the transfer `run` left (every part acknowledged) and returns its outcome (also sent as
    /// `.completed`).
    func complete(
        _ run: RunState, size: Int64, plan: ResumePlan, report: ResumeReport,
        emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> UploadOutcome {
        let snapshot = run.machine.snapshot
        let acknowledged = run.machine.acknowledged
        var counters = run.machine.counters
        let tier = run.machine.decision.tier
        let ledger = run.ledger
        let tracker = run.tracker
        let remote = snapshot.remote
        let partsSent = run.machine.partsSent
        let fileSHA = run.prePass?.sha256 ?? run.fileHash.finalize()
        guard acknowledged.count == snapshot.partCount, ledger.count == snapshot.partCount else {
            throw UploaderError(
                .fileChanged, "\(target.file) gave \(ledger.count) parts where \(snapshot.partCount) were expected")
        }
        let spotChecks = try await spotCheck(
            remote, chunkHashes: run.chunkHashes, identity: run.reader.identity, emit: emit)
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
            partCount: snapshot.partCount, resume: report, parityShardsSent: run.machine.parityShardsSent,
            spotChecks: spotChecks, congestionControl: interruptions.congestionControl)
        emit(.completed(outcome))
        return outcome
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
}
