import AetherIO
import AetherIntegrity
import AetherTransport

/// Decides how an upload starts from its snapshot, in three levels (upload-engine v2.2 ResumePlanner):
/// 1. the file fingerprint (size, mtime, inode, device, first 4 KiB) is unchanged: the local snapshot is trusted;
/// 2. the destination says what it holds (`progress`): only parts it holds are skipped;
/// 3. where the destination keeps the commitment chain (`ChainReportingBackend`), its head over the held prefix
///    must equal the local chain over the snapshot's part digests before that prefix is trusted.
/// A damaged snapshot is reported and a fresh upload starts; a changed file starts fresh and abandons the old
/// remote upload, so stored bytes of two versions are never combined. Snapshots are saved after each
/// acknowledged part. One actor per store serialises every snapshot read and write (RACE-7: no callbacks).
public actor ResumePlanner {
    private let store: any SnapshotStore
    let key: String

    /// A manager for the snapshot under `key` in `store`.
    public init(store: any SnapshotStore, key: String) {
        self.store = store
        self.key = key
    }

    /// The plan for a file with `fingerprint` going to `destination` over `backend`. The destination's answers are
    /// asked through `retries.query`: a reset or refused connection is waited out and a failed answer asked again
    /// (a receiver restarting, or one slow answer, is not a reason to start over).
    func plan(
        fingerprint: FileFingerprint, destination: String, backend: any UploadBackend, retries: RetryPolicy
    ) async -> ResumePlan {
        let snapshot: ResumeSnapshot
        do {
            guard let bytes = try store.load(key: key) else { return .fresh(reason: nil) }
            snapshot = try ResumeSnapshot.deserialize(bytes)
        } catch {
            return .fresh(reason: "\(error.message); starting a fresh upload")
        }
        guard snapshot.destination == destination else {
            return .fresh(reason: "the snapshot names another destination; starting a fresh upload")
        }
        guard snapshot.fingerprint == ResumeSnapshot.Fingerprint(fingerprint) else {
            return .fresh(
                reason: "the file changed since the last run (level 1: fingerprint differs); starting a fresh upload",
                abandoned: snapshot.remote)
        }
        guard snapshot.remote.size == fingerprint.size, snapshot.partCount == partCount(snapshot) else {
            return .fresh(reason: "the snapshot's layout does not fit the file; starting a fresh upload")
        }
        let known = snapshot.acknowledgedDigests
        let progress: RemoteProgress
        do {
            progress = try await retries.query { () async throws(TransportError) in
                try await backend.progress(of: snapshot.remote)
            }
        } catch {
            return .fresh(
                reason: "the destination could not say what it holds (level 2: \(error.message)); starting fresh",
                abandoned: snapshot.remote)
        }
        var held = heldParts(progress, snapshot: snapshot)
        if case .gone = progress {
            return .fresh(reason: "the destination no longer holds the earlier upload (level 2); starting fresh")
        }
        var level = ResumeLevel.server
        var reason: String?
        if let chained = backend.features.chain {
            switch await verifyChain(chained, snapshot: snapshot, known: known, retries: retries) {
            case .verified: level = .chain
            case .unverifiable(let why):
                reason = why
                held = held.filter { known[$0.key] != nil }
            case .mismatch:
                return .fresh(
                    reason: "the destination's chain head does not match the local chain (level 3); starting fresh",
                    abandoned: snapshot.remote)
            }
        }
        return ResumePlan(
            snapshot: snapshot, level: level, held: held, knownHashes: known, reason: reason, abandoned: nil)
    }

    private func partCount(_ snapshot: ResumeSnapshot) -> Int {
        snapshot.remote.size == 0 ? 1 : Int((snapshot.remote.size + snapshot.partSize - 1) / snapshot.partSize)
    }

    private func length(ofPart index: Int, _ snapshot: ResumeSnapshot) -> Int64 {
        let start = Int64(index) * snapshot.partSize
        return max(0, min(snapshot.partSize, snapshot.remote.size - start))
    }

    /// The parts `progress` says are stored, each with the snapshot's receipt when it has one.
    private func heldParts(_ progress: RemoteProgress, snapshot: ResumeSnapshot) -> [Int: PartReceipt] {
        var held: [Int: PartReceipt] = [:]
        func take(_ index: Int) {
            guard index >= 0, index < snapshot.partCount else { return }
            held[index] =
                snapshot.acknowledged[index]?.receipt
                ?? PartReceipt(index: index, length: length(ofPart: index, snapshot))
        }
        switch progress {
        case .gone: break
        case .offset(let offset, _):
            for index in 0..<snapshot.partCount
            where Int64(index) * snapshot.partSize + length(ofPart: index, snapshot) <= offset {
                take(index)
            }
        case .chunks(let indices, _):
            for index in indices { take(index) }
        case .parts(let receipts):
            for receipt in receipts
            where receipt.index >= 0 && receipt.index < snapshot.partCount
                && receipt.length == length(ofPart: receipt.index, snapshot)
            {
                // The checks made when this client sent the part hold for the part the server still lists with the
                // same ETag; a listing alone records none.
                var listed = receipt
                if let sent = snapshot.acknowledged[receipt.index]?.receipt, sent.entityTag == receipt.entityTag {
                    listed.checks = sent.checks
                }
                held[receipt.index] = listed
            }
        }
        return held
    }

    private enum ChainCheck {
        case verified, unverifiable(String), mismatch
    }

    private func verifyChain(
        _ backend: any ChainReportingBackend, snapshot: ResumeSnapshot, known: [Int: Digest32],
        retries: RetryPolicy
    ) async -> ChainCheck {
        let state: ChainState?
        do {
            state = try await retries.query { () async throws(TransportError) in
                try await backend.chainState(of: snapshot.remote)
            }
        } catch {
            return .unverifiable("the destination's chain could not be read (level 3: \(error.message))")
        }
        guard let state else { return .unverifiable("the destination reports no commitment chain yet") }
        guard state.count >= 0, state.count <= snapshot.partCount else { return .mismatch }
        do {
            var chain = try ChunkCommitmentChain(
                sessionID: snapshot.chainSessionID, plannedChunkCount: snapshot.partCount)
            for index in 0..<state.count {
                guard let digest = known[index] else {
                    return .unverifiable("part \(index) of the destination's chain is not in the local snapshot")
                }
                _ = chain.append(digest)
            }
            return chain.head == state.head ? .verified : .mismatch
        } catch {
            return .mismatch
        }
    }

    /// Writes `snapshot` (after each acknowledged part).
    public func save(_ snapshot: ResumeSnapshot) throws(UploaderError) {
        try store.save(try snapshot.serialized(), key: key)
    }

    /// Records in the kept snapshot, if there is one, that the destination failed verification with `message`
    /// (see `ResumeSnapshot.receiptMismatch`); the first record stays. Best effort: the run fails with exit 4
    /// either way.
    public func recordMismatch(_ message: String) {
        guard let bytes = try? store.load(key: key), var snapshot = try? ResumeSnapshot.deserialize(bytes),
            snapshot.receiptMismatch == nil
        else { return }
        snapshot.receiptMismatch = message
        try? save(snapshot)
    }

    /// Removes the snapshot (after completion, or before a fresh start).
    public func remove() throws(UploaderError) {
        try store.remove(key: key)
    }
}
