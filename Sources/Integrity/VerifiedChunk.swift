/// A chunk whose length, SHA-256 and CRC32C matched its manifest entry. Only `ManifestVerifier`
/// makes one, so holding a `VerifiedChunk` is proof that the check ran and passed.
public struct VerifiedChunk: Sendable, Hashable {
    /// The chunk's position in the file.
    public let index: Int
    /// The chunk's digests (equal to the manifest's).
    public let digest: ManifestChunk

    init(index: Int, digest: ManifestChunk) {
        self.index = index
        self.digest = digest
    }
}
