public import AetherIO

/// One upload as the catalogue holds it.
public struct UploadRecord: Sendable, Hashable {
    /// The upload's id.
    public var id: UploadID
    /// Who created it.
    public var owner: ClientIdentity
    /// The protocol it speaks.
    public var uploadProtocol: UploadProtocol
    /// Where it stands.
    public var state: UploadState
    /// Object size, nil while unknown (byte streams with a deferred length).
    public var size: Int64?
    /// Native: bytes per chunk (0 for byte streams).
    public var chunkSize: Int
    /// Native: chunk count (0 for byte streams).
    public var chunks: Int
    /// Native: the commitment chain's session id.
    public var chainSessionID: String?
    /// Native: the whole object's ACI, when the client sent it.
    public var contentID: String?
    /// Native: the parity layout.
    public var parity: ParityLayout?
    /// Metadata (tus `Upload-Metadata`).
    public var metadata: [String: [UInt8]]
    /// The whole-object SHA-256 the client expects.
    public var expectedSHA256: Digest32?
    /// tus concatenation.
    public var concatenation: NewUpload.Concatenation?
    /// Byte streams: the bytes stored and committed.
    public var offset: Int64
    /// Native: the last chunk index whose commitment link was checked, or -1.
    public var chainVerifiedThrough: Int
    /// Native: the link `L[chainVerifiedThrough]` (the genesis before any chunk), kept to check the next one.
    public var chainLink: Digest32?
    /// Wall seconds (Unix) of creation.
    public var createdAt: Int64
    /// Wall seconds (Unix) of the last change; expiry counts from here.
    public var updatedAt: Int64
    /// Why the upload failed, when it did.
    public var failure: String?

    /// A record; the engine builds these.
    public init(
        id: UploadID, owner: ClientIdentity, uploadProtocol: UploadProtocol, state: UploadState, size: Int64?,
        chunkSize: Int, chunks: Int, chainSessionID: String?, contentID: String?, parity: ParityLayout?,
        metadata: [String: [UInt8]], expectedSHA256: Digest32?, concatenation: NewUpload.Concatenation?,
        offset: Int64, chainVerifiedThrough: Int, chainLink: Digest32?, createdAt: Int64, updatedAt: Int64,
        failure: String? = nil
    ) {
        self.id = id
        self.owner = owner
        self.uploadProtocol = uploadProtocol
        self.state = state
        self.size = size
        self.chunkSize = chunkSize
        self.chunks = chunks
        self.chainSessionID = chainSessionID
        self.contentID = contentID
        self.parity = parity
        self.metadata = metadata
        self.expectedSHA256 = expectedSHA256
        self.concatenation = concatenation
        self.offset = offset
        self.chainVerifiedThrough = chainVerifiedThrough
        self.chainLink = chainLink
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.failure = failure
    }
}
