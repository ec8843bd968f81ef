public import AetherIO

/// What the client says a chunk or parity shard is (`Aether-Chunk`, for the decoded bytes).
public struct ChunkDescriptor: Sendable, Hashable {
    /// Length in bytes.
    public var length: Int
    /// CRC32C (Castagnoli).
    public var crc32c: UInt32
    /// SHA-256.
    public var sha256: Digest32
    /// The commitment-chain link `L[index]` the client computed (chunks only; nil for parity).
    public var link: Digest32?

    /// A descriptor.
    public init(length: Int, crc32c: UInt32, sha256: Digest32, link: Digest32? = nil) {
        self.length = length
        self.crc32c = crc32c
        self.sha256 = sha256
        self.link = link
    }
}

/// How a chunk or shard request ended.
public enum ChunkOutcome: Sendable, Hashable {
    /// Stored now (201).
    case stored
    /// This index was already stored with the same SHA-256 (a retry, 200).
    case alreadyStored
}
