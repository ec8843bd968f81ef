public import AetherIO

/// What both sides agree the content is: its size, chunk size, chunk count and Merkle root (AetherIntegrity's
/// tree over the chunk SHA-256s). The claim is bound into the session keys, so answers for other content fail.
public struct PossessionClaim: Sendable, Hashable {
    /// Content length in bytes.
    public let contentSize: UInt64
    /// Chunk length in bytes (the last chunk may be shorter).
    public let chunkSize: UInt32
    /// Number of chunks.
    public let chunkCount: UInt64
    /// The Merkle root over the chunk SHA-256s.
    public let merkleRoot: Digest32

    /// A claim about content of `contentSize` bytes in `chunkCount` chunks of `chunkSize` whose Merkle root is
    /// `merkleRoot` (a verifier that keeps the root of stored content, not its bytes' hashes, states it so).
    public init(contentSize: UInt64, chunkSize: UInt32, chunkCount: UInt64, merkleRoot: Digest32) {
        self.contentSize = contentSize
        self.chunkSize = chunkSize
        self.chunkCount = chunkCount
        self.merkleRoot = merkleRoot
    }

    /// The claim's canonical bytes: `u64 size || u32 chunk size || u64 chunk count || root`.
    var canonicalBytes: [UInt8] {
        var out: [UInt8] = []
        PossessionWireReader.append(contentSize, byteCount: 8, to: &out)
        PossessionWireReader.append(UInt64(chunkSize), byteCount: 4, to: &out)
        PossessionWireReader.append(chunkCount, byteCount: 8, to: &out)
        return out + merkleRoot.bytes
    }
}
