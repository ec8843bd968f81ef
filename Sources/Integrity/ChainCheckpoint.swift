public import AetherIO

/// The persisted state of a `ChunkCommitmentChain`: O(√n) digests.
///
/// Codable as `{"count", "head", "jumpLinks", "sessionID", "stride"}` with lowercase hex digests;
/// decoding rejects unknown fields, bad hex, a jump-link count that does not match `count / stride`, and a
/// count above 2^32 (the most chunks a Merkle tree holds).
public struct ChainCheckpoint: Sendable, Hashable, Codable {
    /// The session whose genesis starts the chain.
    public let sessionID: String
    /// The jump stride.
    public let stride: Int
    /// Links made.
    public let count: Int
    /// The newest link.
    public let head: Digest32
    /// Jump links `J[1]`, `J[2]`, ...
    public let jumpLinks: [Digest32]

    /// Creates a checkpoint, checking its shape.
    public init(sessionID: String, stride: Int, count: Int, head: Digest32, jumpLinks: [Digest32])
        throws(IntegrityError)
    {
        guard !sessionID.isEmpty, stride >= 1, count >= 0, jumpLinks.count == count / stride else {
            throw IntegrityError(.malformedProof, "chain checkpoint has an impossible shape")
        }
        // A chain links at most one chunk per Merkle leaf; a larger count would overflow on the next append.
        guard UInt64(count) <= StreamingMerkleTree.maximumLeafCount else {
            throw IntegrityError(.malformedProof, "chain checkpoint count \(count) exceeds 2^32")
        }
        if count == 0, head != ChunkCommitmentChain.genesis(sessionID: sessionID) {
            throw IntegrityError(.chainBroken, "an empty chain's head must be its genesis")
        }
        self.init(validSessionID: sessionID, stride: stride, count: count, head: head, jumpLinks: jumpLinks)
    }

    init(validSessionID: String, stride: Int, count: Int, head: Digest32, jumpLinks: [Digest32]) {
        self.sessionID = validSessionID
        self.stride = stride
        self.count = count
        self.head = head
        self.jumpLinks = jumpLinks
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case sessionID, stride, count, head, jumpLinks
    }

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        try StrictCoding.requireExactKeys(decoder, CodingKeys.allCases, code: .malformedProof)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var jumps: [Digest32] = []
        for hex in try container.decode([String].self, forKey: .jumpLinks) { jumps.append(try DigestHex.parse(hex)) }
        try self.init(
            sessionID: try container.decode(String.self, forKey: .sessionID),
            stride: try container.decode(Int.self, forKey: .stride),
            count: try container.decode(Int.self, forKey: .count),
            head: try DigestHex.parse(try container.decode(String.self, forKey: .head)), jumpLinks: jumps)
    }

    /// Encodes digests as lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sessionID, forKey: .sessionID)
        try container.encode(stride, forKey: .stride)
        try container.encode(count, forKey: .count)
        try container.encode(head.hex, forKey: .head)
        try container.encode(jumpLinks.map(\.hex), forKey: .jumpLinks)
    }
}
