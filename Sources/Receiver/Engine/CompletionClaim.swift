public import AetherIO

/// What a native client claims at completion (`docs/PROTOCOL.md` 3.8); the receiver compares its own values.
public struct CompletionClaim: Sendable, Hashable {
    /// The chain head the client computed.
    public var chainHead: Digest32
    /// The whole object's SHA-256.
    public var fileSHA256: Digest32
    /// The Merkle root over the chunk hashes.
    public var merkleRoot: Digest32
    /// The client's chunk hashes, when sent: a mismatch then names the first chunk that differs.
    public var chunkHashes: [Digest32]?
    /// The final size, required for an upload created without one (and, when sent, equal to a known size).
    public var size: Int64?

    /// A claim.
    public init(
        chainHead: Digest32, fileSHA256: Digest32, merkleRoot: Digest32, chunkHashes: [Digest32]? = nil,
        size: Int64? = nil
    ) {
        self.chainHead = chainHead
        self.fileSHA256 = fileSHA256
        self.merkleRoot = merkleRoot
        self.chunkHashes = chunkHashes
        self.size = size
    }
}
