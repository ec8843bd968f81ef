/// A check of one part's bytes that was made, and by whom: what a receipt may claim for that part.
public enum PartCheck: String, Sendable, Hashable, Codable, CaseIterable {
    /// The server recomputed the SHA-256 the request's signature covers (`x-amz-content-sha256`) and would have
    /// refused the part had it differed (`XAmzContentSHA256Mismatch`).
    case serverSHA256 = "part-sha256"
    /// The server checked the part's `x-amz-checksum-crc32c` (AWS, R2, MinIO; or an answer that echoed it).
    case serverCRC32C = "part-crc32c"
    /// The client compared the ETag the server answered for the part (the MD5 of the bytes it stored) with the
    /// MD5 of the bytes it sent.
    case clientETagMD5 = "part-etag-md5"

    /// Who made the check.
    public var party: UploadCheck.Party {
        switch self {
        case .serverSHA256, .serverCRC32C: .server
        case .clientETagMD5: .client
        }
    }

    /// What the check compared, for people.
    public var summary: String {
        switch self {
        case .serverSHA256: "the server recomputed each part's signed SHA-256"
        case .serverCRC32C: "the server checked each part's CRC32C"
        case .clientETagMD5: "the client compared each part's ETag with the MD5 of the bytes sent"
        }
    }
}
