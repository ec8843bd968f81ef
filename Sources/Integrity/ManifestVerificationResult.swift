/// The outcome of checking a file's chunks against a `VerifiedManifest`.
public enum ManifestVerificationResult: Sendable, Hashable {
    /// Why one chunk failed.
    public enum ChunkMismatch: Sendable, Hashable {
        /// The chunk's length differs from the manifest's.
        case length(expected: Int, actual: Int)
        /// The chunk's SHA-256 differs.
        case sha256
        /// The chunk's CRC32C differs (its SHA-256 matched).
        case crc32c
        /// The file ended before this chunk.
        case missing
        /// The file has more chunks than the manifest.
        case unexpected
    }

    /// Every chunk (and the whole-file SHA-256, when given) matched.
    case intact
    /// The first chunk that failed, and why.
    case badChunk(index: Int, reason: ChunkMismatch)
    /// Every chunk matched but the whole-file SHA-256 did not.
    case fileDigestMismatch
}
