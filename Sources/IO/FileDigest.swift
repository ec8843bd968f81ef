/// The digests of a whole file (or byte range), from `FileDigestStream.finish()`.
public struct FileDigest: Sendable, Hashable {
    /// The path that was read.
    public let path: String
    /// The file's fingerprint when it was opened (unchanged through the read, or the read threw).
    public let fingerprint: FileFingerprint
    /// The byte range digested.
    public let range: Range<Int64>
    /// SHA-256 of the range.
    public let sha256: Digest32
    /// CRC32C of the range (combined from the chunks' checksums).
    public let crc32c: UInt32
    /// Chunk size used.
    public let chunkSize: Int
    /// Number of chunks.
    public let chunkCount: Int
    /// Length-weighted mean of the chunks' compressibility estimates.
    public let compressibility: Double
    /// The read strategy that was used.
    public let strategy: ReadStrategy

    /// The CRC32C as 8 lowercase hex digits.
    public var crc32cHex: String { CRC32C.hex(crc32c) }
}
