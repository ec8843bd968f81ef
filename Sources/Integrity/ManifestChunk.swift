public import AetherIO

/// The digests of one chunk as read from a file: its length, SHA-256 and CRC32C.
///
/// AetherIO's chunk reader computes these in one pass; `ManifestBuilder` turns a file's chunks
/// into a manifest and `ManifestVerifier` checks a file's chunks against one.
public struct ManifestChunk: Sendable, Hashable {
    /// Bytes in the chunk.
    public let length: Int
    /// SHA-256 of the chunk.
    public let sha256: Digest32
    /// CRC32C (Castagnoli) of the chunk.
    public let crc32c: UInt32

    /// Bundles one chunk's digests.
    public init(length: Int, sha256: Digest32, crc32c: UInt32) {
        self.length = length
        self.sha256 = sha256
        self.crc32c = crc32c
    }
}
