/// Where an upload lives at its destination; `Codable` so a resume snapshot can hold it.
public struct RemoteUpload: Sendable, Hashable, Codable {
    /// The upload resource URL (IETF, tus, native) or the object URL (S3).
    public var location: String
    /// The protocol's own upload id where it has one (S3 `UploadId`), else nil.
    public var uploadID: String?
    /// The object size in bytes.
    public var size: Int64
    /// The size of every part but the last.
    public var partSize: Int64
    /// `Content-Type` still to be sent with the object's bytes (S3's single `PutObject`), if any.
    public var contentType: String?
    /// Metadata still to be sent with the object's bytes (S3's single `PutObject`), if any.
    public var metadata: [String: String]?

    /// A remote upload.
    public init(
        location: String, uploadID: String?, size: Int64, partSize: Int64, contentType: String? = nil,
        metadata: [String: String]? = nil
    ) {
        self.location = location
        self.uploadID = uploadID
        self.size = size
        self.partSize = partSize
        self.contentType = contentType
        self.metadata = metadata
    }
}
