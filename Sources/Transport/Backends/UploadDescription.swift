public import AetherIO

/// What is about to be uploaded.
public struct UploadDescription: Sendable, Hashable {
    /// The object size in bytes.
    public var size: Int64
    /// The re-blocking into parts.
    public var layout: PartLayout
    /// `Content-Type` of the object, when the protocol carries one.
    public var contentType: String?
    /// Metadata as the protocol carries it (tus `Upload-Metadata`, S3 `x-amz-meta-*`).
    public var metadata: [String: String]
    /// The commitment chain's session id (native).
    public var chainSessionID: String
    /// The ACI of the whole object when known in advance (native dedup).
    public var contentID: String?
    /// SHA-256 of the whole object when known before the upload starts (IETF `Repr-Digest` on creation).
    public var sha256: Digest32?
    /// Whether the size is unknown until completion (a file followed while it grows, `aether upload --follow`):
    /// `size` and `layout.objectSize` are then 0 and only `layout.partSize` counts. Backends that cannot create an
    /// upload without its length throw `.protocolUnsupported`.
    public var sizeDeferred = false

    /// A description.
    public init(
        size: Int64, layout: PartLayout, contentType: String? = nil, metadata: [String: String] = [:],
        chainSessionID: String, contentID: String? = nil, sha256: Digest32? = nil
    ) {
        self.size = size
        self.layout = layout
        self.contentType = contentType
        self.metadata = metadata
        self.chainSessionID = chainSessionID
        self.contentID = contentID
        self.sha256 = sha256
    }
}
