public import AetherIO
public import AetherIntegrity

/// One answer of a Byzantine spot check (`docs/PROTOCOL.md` 3.6), computed from bytes re-read from storage.
public struct ChallengeAnswer: Sendable, Hashable {
    /// The chunk index asked.
    public var index: Int
    /// SHA-256 of the stored chunk, nil when the index is not stored.
    public var sha256: Digest32?
    /// `HMAC-SHA-256(key: nonce, message: chunk bytes)`, nil when not stored.
    public var mac: Digest32?
    /// The inclusion proof in the tree over the stored chunk hashes, once every chunk is stored.
    public var proof: MerkleProof?

    /// An answer.
    public init(index: Int, sha256: Digest32?, mac: Digest32?, proof: MerkleProof?) {
        self.index = index
        self.sha256 = sha256
        self.mac = mac
        self.proof = proof
    }
}
