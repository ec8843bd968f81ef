import AetherIO
import AetherTransport

/// How a followed upload starts: an earlier followed attempt of the same file (same device and inode) to the
/// same destination, with the parts the destination still holds and whose digests the snapshot knows; or fresh.
/// The file may have grown since: sizes and times are not compared, the parts' digests are (when they are read
/// again), so a changed prefix is found before anything is completed.
struct FollowPlan {
    var snapshot: ResumeSnapshot?
    var held: [Int: PartReceipt] = [:]
    var knownHashes: [Int: Digest32] = [:]
    var reason: String?
    var abandoned: RemoteUpload?

    /// A fresh start.
    init(reason: String?, abandoned: RemoteUpload? = nil) {
        self.reason = reason
        self.abandoned = abandoned
    }

    static func make(
        store: any SnapshotStore, key: String, device: UInt64, inode: UInt64, destination: String,
        backend: any UploadBackend, retries: RetryPolicy
    ) async -> FollowPlan {
        let snapshot: ResumeSnapshot
        do {
            guard let bytes = try store.load(key: key) else { return FollowPlan(reason: nil) }
            snapshot = try ResumeSnapshot.deserialize(bytes)
        } catch {
            return FollowPlan(reason: "\(error.message); starting a fresh upload")
        }
        guard snapshot.destination == destination else {
            return FollowPlan(reason: "the snapshot names another destination; starting a fresh upload")
        }
        guard snapshot.remote.sizeDeferred == true else {
            return FollowPlan(
                reason: "the earlier attempt uploaded the file with a fixed size; starting a followed upload fresh",
                abandoned: snapshot.remote)
        }
        guard snapshot.fingerprint.device == device, snapshot.fingerprint.inode == inode else {
            return FollowPlan(
                reason: "the file was replaced since the last run (another inode); starting a fresh upload",
                abandoned: snapshot.remote)
        }
        let known = snapshot.acknowledgedDigests
        let progress: RemoteProgress
        do {
            progress = try await retries.query { () async throws(TransportError) in
                try await backend.progress(of: snapshot.remote)
            }
        } catch {
            return FollowPlan(
                reason: "the destination could not say what it holds (\(error.message)); starting fresh",
                abandoned: snapshot.remote)
        }
        var held: [Int: PartReceipt] = [:]
        switch progress {
        case .gone:
            return FollowPlan(reason: "the destination no longer holds the earlier upload; starting fresh")
        case .chunks(let indices, _):
            for (index, part) in snapshot.acknowledged where indices.contains(index) { held[index] = part.receipt }
        case .offset(let offset, _):
            for (index, part) in snapshot.acknowledged
            where Int64(index) * snapshot.partSize + part.receipt.length <= offset {
                held[index] = part.receipt
            }
        case .parts(let receipts):
            for receipt in receipts where snapshot.acknowledged[receipt.index]?.receipt.length == receipt.length {
                held[receipt.index] = receipt
            }
        }
        var plan = FollowPlan(
            reason: "following again: \(held.count) parts already stored, the rest is read from the file")
        plan.snapshot = snapshot
        plan.held = held
        plan.knownHashes = known
        return plan
    }
}
