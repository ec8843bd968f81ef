public import AetherIO

/// What the client computed over the whole object, sent with the completion where the protocol can check it.
public struct CompletionSummary: Sendable, Hashable {
    /// Every part's receipt, in index order.
    public var parts: [PartReceipt]
    /// SHA-256 of the whole object.
    public var fileSHA256: Digest32
    /// The Merkle root over the chunk hashes (native).
    public var merkleRoot: Digest32?
    /// The commitment chain head (native).
    public var chainHead: Digest32?

    /// A summary.
    public init(parts: [PartReceipt], fileSHA256: Digest32, merkleRoot: Digest32? = nil, chainHead: Digest32? = nil) {
        self.parts = parts
        self.fileSHA256 = fileSHA256
        self.merkleRoot = merkleRoot
        self.chainHead = chainHead
    }
}
