public import AetherIO

/// The receipt of a completed upload (`application/aether-receipt+json`, `docs/PROTOCOL.md` 3.8): every value is
/// the receiver's own computation from stored bytes.
public struct UploadReceiptRecord: Sendable, Hashable {
    /// The commitment chain's head over the stored chunk hashes (native; zero for byte streams).
    public var chainHead: Digest32
    /// Chunk count (native; 0 for byte streams).
    public var chunks: Int
    /// CIDv1 (raw, sha2-256) of the object, `bafkrei...`.
    public var cid: String
    /// Wall seconds (Unix) of completion.
    public var completedAt: Int64
    /// SHA-256 of the whole object.
    public var fileSHA256: Digest32
    /// The upload's id.
    public var id: UploadID
    /// Merkle root over the stored chunk hashes (native; the empty root for byte streams).
    public var merkleRoot: Digest32
    /// Object size in bytes.
    public var size: Int64

    /// A receipt.
    public init(
        chainHead: Digest32, chunks: Int, cid: String, completedAt: Int64, fileSHA256: Digest32, id: UploadID,
        merkleRoot: Digest32, size: Int64
    ) {
        self.chainHead = chainHead
        self.chunks = chunks
        self.cid = cid
        self.completedAt = completedAt
        self.fileSHA256 = fileSHA256
        self.id = id
        self.merkleRoot = merkleRoot
        self.size = size
    }
}
