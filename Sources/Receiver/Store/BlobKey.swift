/// The name of one blob in a `BlobStore`.
public enum BlobKey: Hashable, Sendable, CustomStringConvertible {
    /// Native chunk `index` of an upload.
    case chunk(UploadID, index: Int)
    /// Parity shard `shard` of group `group` of an upload.
    case parity(UploadID, group: Int, shard: Int)
    /// The byte stream of an IETF or tus upload, appended in place.
    case stream(UploadID)
    /// A completed object, visible to readers.
    case object(UploadID)

    /// The upload the blob belongs to.
    public var upload: UploadID {
        switch self {
        case .chunk(let id, _), .parity(let id, _, _), .stream(let id), .object(let id): id
        }
    }

    public var description: String {
        switch self {
        case .chunk(let id, let index): "chunks/\(id)/\(index)"
        case .parity(let id, let group, let shard): "parity/\(id)/\(group).\(shard)"
        case .stream(let id): "streams/\(id)"
        case .object(let id): "objects/\(id)"
        }
    }
}
