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

    /// A remote upload.
    public init(location: String, uploadID: String?, size: Int64, partSize: Int64) {
        self.location = location
        self.uploadID = uploadID
        self.size = size
        self.partSize = partSize
    }
}
