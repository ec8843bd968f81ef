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
    /// One resource per part where the protocol stores parts apart until completion (tus concatenation: the
    /// partial uploads' URLs in part order), else nil.
    public var partLocations: [String]?
    /// When the destination said it drops the unfinished upload, in seconds since 1970 (tus `Upload-Expires`).
    public var expires: Int64?
    /// Metadata still to be sent with the object's bytes (S3's single `PutObject`) or that the completion must
    /// repeat (tus: the final upload of a concatenation), else nil.
    public var metadata: [String: String]?
    /// True when the upload was created without its length (`UploadDescription.sizeDeferred`): `size` is then the
    /// extent the client has sent so far, and the completion tells the destination the final size.
    public var sizeDeferred: Bool?

    /// A remote upload.
    public init(
        location: String, uploadID: String?, size: Int64, partSize: Int64, contentType: String? = nil,
        partLocations: [String]? = nil, expires: Int64? = nil, metadata: [String: String]? = nil
    ) {
        self.location = location
        self.uploadID = uploadID
        self.size = size
        self.partSize = partSize
        self.contentType = contentType
        self.partLocations = partLocations
        self.expires = expires
        self.metadata = metadata
    }
}
