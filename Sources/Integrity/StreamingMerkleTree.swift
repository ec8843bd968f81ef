public import AetherIO

/// A Merkle tree built one leaf at a time in O(log n) memory and O(log n) hashing per append
/// (the binary-carry model: like incrementing a binary counter, each carry is one node hash).
///
/// ## Shape and closing rule
/// After `n` leaves the tree keeps one perfect subtree per set bit of `n`: bit `k` set means a
/// complete subtree of `2^k` leaves whose root has level `k`. Appending a leaf carries upward:
/// while the lowest slot is occupied, merge it (left) with the carry (right) into a node one
/// level higher.
///
/// `root` closes over a count that is not a power of two by folding the occupied slots from the
/// smallest (rightmost) to the tallest (leftmost): `acc = smallest`; for each taller slot `T` at
/// level `k`, `acc = node(level: k + 1, left: T, right: acc)`. A lone node is promoted unchanged
/// (never hashed with itself or with padding), and a merged node takes the level of the taller
/// node plus one. The result is the shape of RFC 9162's Merkle Tree Hash (the left subtree holds
/// the largest power of two strictly below the count) with each node's level equal to one more
/// than its left child's level. The root of zero leaves is `MerkleHash.emptyRoot`, and of one
/// leaf is that leaf's hash.
///
/// ## Checkpoints
/// `append` reports when a checkpoint is due: after every carry merge and every 16 leaves.
/// `init(restoring:)` resumes from a `MerkleCheckpoint` and yields the same root as an
/// uninterrupted build.
public struct StreamingMerkleTree: Sendable {
    /// The most leaves a tree can hold: leaf indices are 32-bit.
    public static let maximumLeafCount: UInt64 = 1 << 32

    /// How many leaves were appended.
    public private(set) var leafCount: UInt64 = 0

    // slots[k] holds the root of the complete subtree of 2^k leaves when bit k of leafCount is set.
    private var slots: [Digest32]

    /// An empty tree.
    public init() {
        slots = [Digest32](repeating: .zero, count: 33)
    }

    /// Resumes from a checkpoint.
    public init(restoring checkpoint: MerkleCheckpoint) {
        self.init()
        leafCount = checkpoint.leafCount
        var nodes = checkpoint.nodes.makeIterator()
        for level in stride(from: 32, through: 0, by: -1) where checkpoint.leafCount & (1 << UInt64(level)) != 0 {
            if let node = nodes.next() { slots[level] = node }
        }
    }

    /// Appends the leaf for the next chunk's SHA-256.
    ///
    /// - Returns: whether a checkpoint is due (a carry merge happened, or the count reached a multiple of 16).
    /// - Throws: `.invalidArgument` when the tree already holds `maximumLeafCount` leaves.
    @discardableResult
    public mutating func append(_ chunkHash: Digest32) throws(IntegrityError) -> Bool {
        guard leafCount < Self.maximumLeafCount else {
            throw IntegrityError(.invalidArgument, "a Merkle tree holds at most 2^32 leaves")
        }
        var carry = MerkleHash.leaf(index: UInt32(truncatingIfNeeded: leafCount), chunkHash: chunkHash)
        var level = 0
        var bits = leafCount
        while bits & 1 == 1 {
            carry = MerkleHash.node(level: UInt8(truncatingIfNeeded: level + 1), left: slots[level], right: carry)
            level += 1
            bits >>= 1
        }
        slots[level] = carry
        leafCount += 1
        return level > 0 || leafCount & 15 == 0
    }

    /// The root over all leaves so far (see the closing rule above).
    public var root: Digest32 {
        guard leafCount > 0 else { return MerkleHash.emptyRoot }
        var level = leafCount.trailingZeroBitCount
        var accumulator = slots[level]
        level += 1
        while level <= 32 {
            if leafCount & (1 << UInt64(level)) != 0 {
                accumulator = MerkleHash.node(
                    level: UInt8(truncatingIfNeeded: level + 1), left: slots[level], right: accumulator)
            }
            level += 1
        }
        return accumulator
    }

    /// The state to persist for a resume: the leaf count and the occupied slots, tallest first.
    public var checkpoint: MerkleCheckpoint {
        var nodes: [Digest32] = []
        for level in stride(from: 32, through: 0, by: -1) where leafCount & (1 << UInt64(level)) != 0 {
            nodes.append(slots[level])
        }
        return MerkleCheckpoint(validLeafCount: leafCount, nodes: nodes)
    }
}
