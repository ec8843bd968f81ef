public import AetherIO

/// An inclusion proof: the sibling hashes on the path from one leaf to the root of a tree of
/// `leafCount` leaves (the shape `StreamingMerkleTree` documents), ordered leaf to root.
///
/// The path's shape follows from `leafIndex` and `leafCount` alone, so a proof carries no
/// direction bits and a verifier rejects a proof whose sibling count does not fit the shape.
///
/// Two strict encodings:
/// - binary (`serialized()` / `init(serialized:)`): `"AMP1"`, leaf index (8 bytes LE), leaf count
///   (8 bytes LE), sibling count (1 byte), then 32 bytes per sibling; nothing may follow;
/// - Codable: `{"leafCount": n, "leafIndex": i, "siblings": ["<64 lowercase hex>", ...]}`.
public struct MerkleProof: Sendable, Hashable, Codable {
    /// The leaf the proof is for.
    public let leafIndex: UInt64
    /// Leaves in the tree the proof is against.
    public let leafCount: UInt64
    /// Sibling hashes, leaf to root.
    public let siblings: [Digest32]

    private static let magic: [UInt8] = Array("AMP1".utf8)

    /// Creates a proof, checking that its shape is possible.
    public init(leafIndex: UInt64, leafCount: UInt64, siblings: [Digest32]) throws(IntegrityError) {
        guard leafCount <= StreamingMerkleTree.maximumLeafCount, leafIndex < leafCount else {
            throw IntegrityError(.malformedProof, "leaf \(leafIndex) is outside a tree of \(leafCount) leaves")
        }
        let expected = Self.path(leafIndex: leafIndex, leafCount: leafCount).count
        guard siblings.count == expected else {
            throw IntegrityError(
                .malformedProof, "leaf \(leafIndex) of \(leafCount) needs \(expected) siblings, got \(siblings.count)")
        }
        self.leafIndex = leafIndex
        self.leafCount = leafCount
        self.siblings = siblings
    }

    /// One step of a path, leaf to root: the level of the node formed there and which side the sibling is on.
    struct Step {
        let level: UInt8
        let siblingIsLeft: Bool
    }

    /// The steps from leaf `leafIndex` up to the root, found by splitting top-down at the largest
    /// power of two below the count (O(log n)).
    static func path(leafIndex: UInt64, leafCount: UInt64) -> [Step] {
        var steps: [Step] = []
        var index = leafIndex
        var count = leafCount
        while count > 1 {
            let leftSize = largestPowerOfTwo(below: count)
            let level = UInt8(truncatingIfNeeded: leftSize.trailingZeroBitCount + 1)
            if index < leftSize {
                steps.append(Step(level: level, siblingIsLeft: false))
                count = leftSize
            } else {
                steps.append(Step(level: level, siblingIsLeft: true))
                index -= leftSize
                count -= leftSize
            }
        }
        return steps.reversed()
    }

    /// The largest power of two strictly below `count` (count >= 2).
    static func largestPowerOfTwo(below count: UInt64) -> UInt64 {
        1 << UInt64(63 - (count - 1).leadingZeroBitCount)
    }

    /// The root this proof leads to from a chunk's SHA-256.
    public func root(forChunkHash chunkHash: Digest32) -> Digest32 {
        var accumulator = MerkleHash.leaf(index: UInt32(truncatingIfNeeded: leafIndex), chunkHash: chunkHash)
        for (step, sibling) in zip(Self.path(leafIndex: leafIndex, leafCount: leafCount), siblings) {
            accumulator =
                step.siblingIsLeft
                ? MerkleHash.node(level: step.level, left: sibling, right: accumulator)
                : MerkleHash.node(level: step.level, left: accumulator, right: sibling)
        }
        return accumulator
    }

    /// Whether the chunk with SHA-256 `chunkHash` is leaf `leafIndex` of the tree of `leafCount`
    /// leaves with `root` (constant-time comparison; fails closed).
    ///
    /// The verifier supplies the leaf count from what it trusts (the manifest's chunk count): a
    /// root does not commit to its leaf count, and two counts can share a path shape, so a count
    /// read from the proof alone would be unauthenticated.
    public func verify(chunkHash: Digest32, root: Digest32, leafCount trustedCount: UInt64) -> Bool {
        let rootMatches = self.root(forChunkHash: chunkHash) == root
        return rootMatches && leafCount == trustedCount
    }

    /// The binary encoding (see the type's documentation).
    public func serialized() -> [UInt8] {
        var out = Self.magic
        out.reserveCapacity(21 + 32 * siblings.count)
        unsafe withUnsafeBytes(of: leafIndex.littleEndian) { unsafe out.append(contentsOf: $0) }
        unsafe withUnsafeBytes(of: leafCount.littleEndian) { unsafe out.append(contentsOf: $0) }
        out.append(UInt8(truncatingIfNeeded: siblings.count))
        for sibling in siblings { out.append(contentsOf: sibling.bytes) }
        return out
    }

    /// Parses the binary encoding strictly: wrong magic, a truncated or over-long buffer, or an
    /// impossible shape throws `.malformedProof`.
    public init(serialized bytes: some Collection<UInt8>) throws(IntegrityError) {
        let data = Array(bytes)
        guard data.count >= 21, Array(data[0..<4]) == Self.magic else {
            throw IntegrityError(.malformedProof, "not an Aether Merkle proof (bad magic or too short)")
        }
        func readUInt64(_ offset: Int) -> UInt64 {
            var value: UInt64 = 0
            for byte in data[offset..<offset + 8].reversed() { value = value << 8 | UInt64(byte) }
            return value
        }
        let siblingCount = Int(data[20])
        guard data.count == 21 + 32 * siblingCount else {
            throw IntegrityError(
                .malformedProof, "proof with \(siblingCount) siblings must be \(21 + 32 * siblingCount) bytes")
        }
        var siblings: [Digest32] = []
        for k in 0..<siblingCount {
            let start = 21 + 32 * k
            guard let digest = try? Digest32(bytes: data[start..<start + 32]) else {
                throw IntegrityError(.malformedProof, "sibling \(k) is not 32 bytes")
            }
            siblings.append(digest)
        }
        try self.init(leafIndex: readUInt64(4), leafCount: readUInt64(12), siblings: siblings)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case leafIndex, leafCount, siblings
    }

    /// Decodes strictly: unknown fields, bad hex and impossible shapes throw.
    public init(from decoder: any Decoder) throws {
        try StrictCoding.requireExactKeys(decoder, CodingKeys.allCases, code: .malformedProof)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let hexes = try container.decode([String].self, forKey: .siblings)
        var siblings: [Digest32] = []
        for hex in hexes {
            do { siblings.append(try DigestHex.parse(hex)) } catch {
                throw IntegrityError(.malformedProof, "sibling is not 64 lowercase hex digits")
            }
        }
        try self.init(
            leafIndex: try container.decode(UInt64.self, forKey: .leafIndex),
            leafCount: try container.decode(UInt64.self, forKey: .leafCount), siblings: siblings)
    }

    /// Encodes digests as lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(leafIndex, forKey: .leafIndex)
        try container.encode(leafCount, forKey: .leafCount)
        try container.encode(siblings.map(\.hex), forKey: .siblings)
    }
}
