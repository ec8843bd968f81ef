public import AetherIO
public import AetherIntegrity

/// One answer of a Byzantine spot check (`docs/PROTOCOL.md` 3.6): a MAC over the range's bytes read from storage,
/// with the chunk's recorded hash and its Merkle proof (built from the recorded hashes, never from a re-read).
public struct ChallengeAnswer: Sendable, Hashable {
    /// The range asked.
    public var item: ByzantineChallenge.Item
    /// `ByzantineChallenge.response(for:bytes:)` over the stored bytes of the range, nil when the chunk is not
    /// stored.
    public var mac: Digest32?
    /// SHA-256 of the chunk as recorded when it was stored, nil when none is recorded (not stored, or an upload
    /// completed by proof of possession, which keeps no chunk hashes of its own).
    public var sha256: Digest32?
    /// The inclusion proof in the tree over the recorded chunk hashes, once every chunk's hash is recorded.
    public var proof: MerkleProof?

    /// An answer.
    public init(item: ByzantineChallenge.Item, mac: Digest32?, sha256: Digest32?, proof: MerkleProof?) {
        self.item = item
        self.mac = mac
        self.sha256 = sha256
        self.proof = proof
    }

    /// The chunk index asked.
    public var index: Int { item.index }
}
