public import AetherIO

/// A stored chunk or parity shard, as the catalogue records it.
public struct ChunkReceipt: Sendable, Hashable {
    /// Chunk index, or for parity the shard's position `group * parity + shard`.
    public var index: Int
    /// Length in bytes.
    public var length: Int
    /// SHA-256 of the stored bytes.
    public var sha256: Digest32
    /// CRC32C of the stored bytes.
    public var crc32c: UInt32
    /// The link the client sent, if any.
    public var link: Digest32?
    /// Whether the receiver rebuilt it from parity (rather than receiving it).
    public var rebuilt: Bool

    /// A receipt.
    public init(index: Int, length: Int, sha256: Digest32, crc32c: UInt32, link: Digest32?, rebuilt: Bool) {
        self.index = index
        self.length = length
        self.sha256 = sha256
        self.crc32c = crc32c
        self.link = link
        self.rebuilt = rebuilt
    }
}
