/// A `ChunkIntegrityLedger`'s persisted state: the Merkle checkpoint and the chain checkpoint,
/// always covering the same number of chunks. Codable as `{"chain": ..., "merkle": ...}`.
public struct IntegrityCheckpoint: Sendable, Hashable, Codable {
    /// The Merkle tree's state.
    public let merkle: MerkleCheckpoint
    /// The commitment chain's state.
    public let chain: ChainCheckpoint

    /// Pairs two checkpoints; throws `.malformedProof` when they cover different counts.
    public init(merkle: MerkleCheckpoint, chain: ChainCheckpoint) throws(IntegrityError) {
        guard merkle.leafCount == UInt64(chain.count) else {
            throw IntegrityError(.malformedProof, "checkpoint tree and chain cover different chunk counts")
        }
        self.init(validMerkle: merkle, chain: chain)
    }

    init(validMerkle: MerkleCheckpoint, chain: ChainCheckpoint) {
        self.merkle = validMerkle
        self.chain = chain
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case merkle, chain
    }

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        try StrictCoding.requireExactKeys(decoder, CodingKeys.allCases, code: .malformedProof)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            merkle: try container.decode(MerkleCheckpoint.self, forKey: .merkle),
            chain: try container.decode(ChainCheckpoint.self, forKey: .chain))
    }

    /// Encodes both parts.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(merkle, forKey: .merkle)
        try container.encode(chain, forKey: .chain)
    }
}
