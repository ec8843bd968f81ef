public import AetherIO
public import AetherTransport

/// What the resume manager found: an earlier attempt to continue (and which parts it may skip), or a fresh start.
public struct ResumePlan: Sendable {
    /// The snapshot to continue, nil for a fresh upload.
    public let snapshot: ResumeSnapshot?
    /// The deepest level that held.
    public let level: ResumeLevel
    /// Parts the destination holds and that are not sent again, with their receipts.
    public let held: [Int: PartReceipt]
    /// SHA-256 of parts sent in earlier runs; a re-read part that differs means the file changed.
    public let knownHashes: [Int: Digest32]
    /// Why the earlier attempt was not (fully) taken, for people.
    public let reason: String?
    /// An earlier remote upload that must not be continued (file changed, chain mismatch), to abort.
    public let abandoned: RemoteUpload?

    /// A fresh start.
    static func fresh(reason: String?, abandoned: RemoteUpload? = nil) -> ResumePlan {
        ResumePlan(snapshot: nil, level: .none, held: [:], knownHashes: [:], reason: reason, abandoned: abandoned)
    }
}
