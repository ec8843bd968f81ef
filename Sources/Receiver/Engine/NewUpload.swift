public import AetherIO

/// What a creation request asks for, protocol-neutral: the HTTP layer fills it from the native JSON body, the
/// IETF headers or the tus headers.
public struct NewUpload: Sendable, Hashable {
    /// tus concatenation (`Upload-Concat`).
    public enum Concatenation: Sendable, Hashable {
        /// A partial upload, later joined into a final one.
        case partial
        /// The final upload: the given completed partial uploads, in order.
        case final([UploadID])
    }

    /// The protocol the upload speaks.
    public var uploadProtocol: UploadProtocol
    /// Object size in bytes; nil while unknown (IETF `Upload-Complete: ?0` without a length, tus
    /// `Upload-Defer-Length: 1`). Native uploads require it.
    public var size: Int64?
    /// Native: bytes per chunk (the last may be shorter).
    public var chunkSize: Int?
    /// Native: chunk count, `ceil(size / chunkSize)` (1 for an empty object).
    public var chunks: Int?
    /// Native: the commitment chain's session id (1...256 UTF-8 bytes).
    public var chainSessionID: String?
    /// Native: the ACI of the whole object (`aci:1:sha256:<hex>`), when the client knows it (enables dedup).
    public var contentID: String?
    /// Native: the parity layout, when the client sends parity shards.
    public var parity: ParityLayout?
    /// tus `Upload-Metadata` (and any other key-value metadata): key -> bytes.
    public var metadata: [String: [UInt8]]
    /// The SHA-256 of the whole object the client expects (IETF `Repr-Digest`), checked at completion.
    public var expectedSHA256: Digest32?
    /// tus concatenation, when asked.
    public var concatenation: Concatenation?

    /// A creation request; only the protocol is required here, `UploadEngine.create` checks the rest.
    public init(
        uploadProtocol: UploadProtocol, size: Int64? = nil, chunkSize: Int? = nil, chunks: Int? = nil,
        chainSessionID: String? = nil, contentID: String? = nil, parity: ParityLayout? = nil,
        metadata: [String: [UInt8]] = [:], expectedSHA256: Digest32? = nil, concatenation: Concatenation? = nil
    ) {
        self.uploadProtocol = uploadProtocol
        self.size = size
        self.chunkSize = chunkSize
        self.chunks = chunks
        self.chainSessionID = chainSessionID
        self.contentID = contentID
        self.parity = parity
        self.metadata = metadata
        self.expectedSHA256 = expectedSHA256
        self.concatenation = concatenation
    }
}
