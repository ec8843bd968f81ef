/// The destination's acknowledgement of one part.
public struct PartReceipt: Sendable, Hashable, Codable {
    /// The part index.
    public var index: Int
    /// The part's length in bytes.
    public var length: Int64
    /// The entity tag the destination gave (S3 `ETag`), if any.
    public var entityTag: String?

    /// A receipt.
    public init(index: Int, length: Int64, entityTag: String? = nil) {
        self.index = index
        self.length = length
        self.entityTag = entityTag
    }
}
