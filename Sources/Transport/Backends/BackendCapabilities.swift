/// What a storage backend accepts, so that the chunk stream can be re-blocked into parts it takes
/// (upload-engine v2.2 BackendCapabilities, "Cloudflare R2 multipart constraints").
public struct BackendCapabilities: Sendable, Hashable {
    /// How the backend tells a client what it already holds.
    public enum ResumeQuery: Sendable, Hashable {
        /// One contiguous offset (IETF `HEAD`, tus `HEAD`).
        case offset
        /// A list of stored parts (S3 `ListParts`).
        case parts
        /// A bitmap of stored chunks (native status document).
        case chunkBitmap
    }

    /// A checksum the backend checks per part.
    public enum ChecksumKind: Sendable, Hashable {
        case sha256
        case crc32c
        case crc32
        case sha1
    }

    /// The smallest part in bytes, except the last part (S3: 5 MiB).
    public var minimumPartSize: Int64
    /// The largest part in bytes.
    public var maximumPartSize: Int64
    /// The most parts one upload may have (S3: 10,000).
    public var maximumParts: Int
    /// Whether every part but the last must have the same size (Cloudflare R2).
    public var equalParts: Bool
    /// Whether parts may be sent at once on several requests.
    public var parallelParts: Bool
    /// Whether parts may arrive in any order.
    public var outOfOrderParts: Bool
    /// The checksums the backend verifies per part.
    public var checksums: Set<ChecksumKind>
    /// How a resume learns what is stored.
    public var resumeQuery: ResumeQuery
    /// The largest object in bytes.
    public var maximumObjectSize: Int64

    /// Capabilities as given.
    public init(
        minimumPartSize: Int64, maximumPartSize: Int64, maximumParts: Int, equalParts: Bool, parallelParts: Bool,
        outOfOrderParts: Bool, checksums: Set<ChecksumKind>, resumeQuery: ResumeQuery, maximumObjectSize: Int64
    ) {
        self.minimumPartSize = minimumPartSize
        self.maximumPartSize = maximumPartSize
        self.maximumParts = maximumParts
        self.equalParts = equalParts
        self.parallelParts = parallelParts
        self.outOfOrderParts = outOfOrderParts
        self.checksums = checksums
        self.resumeQuery = resumeQuery
        self.maximumObjectSize = maximumObjectSize
    }
}

extension BackendCapabilities {
    /// Whether a request cut part way leaves what arrived stored: a native run keeps the chunks finished before the
    /// cut (and, with `resume-chunk`, the received prefix of the one under way), an IETF or tus append the bytes up
    /// to the cut; an S3 part is lost whole.
    public var keepsCutPrefix: Bool { resumeQuery != .parts }
}
