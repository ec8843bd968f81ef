/// The destination's acknowledgement of one part.
public struct PartReceipt: Sendable, Hashable, Codable {
    /// The part index.
    public var index: Int
    /// The part's length in bytes.
    public var length: Int64
    /// The entity tag the destination gave (S3 `ETag`), if any.
    public var entityTag: String?
    /// The part's CRC32C as the destination recorded it (S3 `x-amz-checksum-crc32c`, `ChecksumCRC32C`), if any.
    public var checksumCRC32C: UInt32?
    /// The checks of the part's bytes made when it was sent (nil where none is known: a part listed by ListParts).
    public var checks: Set<PartCheck>?

    /// A receipt.
    public init(
        index: Int, length: Int64, entityTag: String? = nil, checksumCRC32C: UInt32? = nil,
        checks: Set<PartCheck>? = nil
    ) {
        self.index = index
        self.length = length
        self.entityTag = entityTag
        self.checksumCRC32C = checksumCRC32C
        self.checks = checks
    }
}
