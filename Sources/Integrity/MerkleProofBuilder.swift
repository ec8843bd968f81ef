public import AetherIO

/// Builds inclusion proofs and the root from the full list of chunk SHA-256s.
///
/// A `StreamingMerkleTree` keeps only O(log n) nodes, so it cannot answer for an arbitrary leaf;
/// whoever holds the chunk list (the receiver, or a client re-reading its manifest) builds proofs
/// here. Building hashes every leaf once, and each proof costs O(n) node hashes.
public struct MerkleProofBuilder: Sendable {
    private let leaves: [Digest32]

    /// Prepares the leaf hashes of `chunkHashes` (in chunk order).
    public init(chunkHashes: [Digest32]) throws(IntegrityError) {
        guard UInt64(chunkHashes.count) <= StreamingMerkleTree.maximumLeafCount else {
            throw IntegrityError(.invalidArgument, "a Merkle tree holds at most 2^32 leaves")
        }
        leaves = chunkHashes.enumerated().map { MerkleHash.leaf(index: UInt32(truncatingIfNeeded: $0), chunkHash: $1) }
    }

    /// Leaves in the tree.
    public var leafCount: Int { leaves.count }

    /// The root, equal to a `StreamingMerkleTree` fed the same chunk hashes.
    public var root: Digest32 {
        leaves.isEmpty ? MerkleHash.emptyRoot : subtreeRoot(0..<leaves.count)
    }

    /// The proof for leaf `index`; `.invalidArgument` when it is out of range.
    public func proof(forLeaf index: Int) throws(IntegrityError) -> MerkleProof {
        guard index >= 0, index < leaves.count else {
            throw IntegrityError(.invalidArgument, "leaf \(index) is outside a tree of \(leaves.count) leaves")
        }
        var siblings: [Digest32] = []
        var range = 0..<leaves.count
        while range.count > 1 {
            let leftSize = Int(MerkleProof.largestPowerOfTwo(below: UInt64(range.count)))
            let split = range.lowerBound + leftSize
            if index < split {
                siblings.append(subtreeRoot(split..<range.upperBound))
                range = range.lowerBound..<split
            } else {
                siblings.append(subtreeRoot(range.lowerBound..<split))
                range = split..<range.upperBound
            }
        }
        return try MerkleProof(
            leafIndex: UInt64(index), leafCount: UInt64(leaves.count), siblings: siblings.reversed())
    }

    private func subtreeRoot(_ range: Range<Int>) -> Digest32 {
        if range.count == 1 { return leaves[range.lowerBound] }
        let leftSize = Int(MerkleProof.largestPowerOfTwo(below: UInt64(range.count)))
        let split = range.lowerBound + leftSize
        return MerkleHash.node(
            level: UInt8(truncatingIfNeeded: leftSize.trailingZeroBitCount + 1),
            left: subtreeRoot(range.lowerBound..<split),
            right: subtreeRoot(split..<range.upperBound))
    }
}
