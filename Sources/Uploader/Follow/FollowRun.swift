import AetherIO
import AetherIntegrity
import AetherTransport

/// The mutable state of one followed transfer, owned by the `FollowedUploader` actor.
struct FollowRun {
    var snapshot: ResumeSnapshot
    var acknowledged: [Int: PartReceipt]
    let knownHashes: [Int: Digest32]
    let ledger: ChunkIntegrityLedger
    let started: Double
    let emit: @Sendable (UploadEvent) -> Void
    var fileHash = SHA256()
    var chunkHashes: [Digest32] = []
    /// Bytes read from the file so far (the known length while following).
    var readBytes: Int64 = 0
    var sentBytes: Int64 = 0
    var partsSent = 0
    /// Bytes put on the wire in this run, retries included.
    var runBytes: Int64 = 0
    var acknowledgedBytes: Int64 = 0
    var runAcknowledgedBytes: Int64 = 0
    /// The first failed send: the follower stops at its next look.
    var failure: (any Error)?

    init(
        snapshot: ResumeSnapshot, acknowledged: [Int: PartReceipt], knownHashes: [Int: Digest32],
        ledger: ChunkIntegrityLedger, started: Double, emit: @escaping @Sendable (UploadEvent) -> Void
    ) {
        self.snapshot = snapshot
        self.acknowledged = acknowledged
        self.knownHashes = knownHashes
        self.ledger = ledger
        self.started = started
        self.emit = emit
        acknowledgedBytes = acknowledged.values.reduce(0) { $0 + $1.length }
        sentBytes = acknowledgedBytes
    }
}
