public import AetherIO

/// The persisted state of a `StreamingMerkleTree`: its leaf count and one subtree root per set bit
/// of the count, tallest (leftmost) first. At most 33 digests, whatever the size of the file.
///
/// Codable as `{"leafCount": n, "nodes": ["<64 lowercase hex>", ...]}`; decoding rejects a node
/// count that does not match the leaf count, bad hex, and unknown keys.
public struct MerkleCheckpoint: Sendable, Hashable, Codable {
    /// Leaves covered.
    public let leafCount: UInt64
    /// Subtree roots, tallest first.
    public let nodes: [Digest32]

    /// Creates a checkpoint, checking that `nodes` has one entry per set bit of `leafCount`.
    public init(leafCount: UInt64, nodes: [Digest32]) throws(IntegrityError) {
        guard leafCount <= StreamingMerkleTree.maximumLeafCount else {
            throw IntegrityError(.malformedProof, "checkpoint leaf count \(leafCount) exceeds 2^32")
        }
        guard nodes.count == leafCount.nonzeroBitCount else {
            throw IntegrityError(
                .malformedProof, "checkpoint for \(leafCount) leaves needs \(leafCount.nonzeroBitCount) nodes")
        }
        self.init(validLeafCount: leafCount, nodes: nodes)
    }

    init(validLeafCount: UInt64, nodes: [Digest32]) {
        self.leafCount = validLeafCount
        self.nodes = nodes
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case leafCount, nodes
    }

    /// Decodes strictly (see the type's documentation).
    public init(from decoder: any Decoder) throws {
        try StrictCoding.requireExactKeys(decoder, CodingKeys.allCases, code: .malformedProof)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let count = try container.decode(UInt64.self, forKey: .leafCount)
        let hexes = try container.decode([String].self, forKey: .nodes)
        try self.init(
            leafCount: count, nodes: try hexes.map { (hex) throws(IntegrityError) in try DigestHex.parse(hex) })
    }

    /// Encodes digests as lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(leafCount, forKey: .leafCount)
        try container.encode(nodes.map(\.hex), forKey: .nodes)
    }
}
