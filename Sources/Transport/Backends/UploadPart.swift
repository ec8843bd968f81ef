public import AetherIO

/// One part of the layout, with its digests over its bytes.
public struct UploadPart: Sendable {
    /// The part index (0-based) in the layout.
    public let index: Int
    /// The byte offset of the part in the object.
    public let offset: Int64
    /// The bytes, streamed from the IO layer's buffers.
    public let body: HTTPRequestBody
    /// The number of bytes.
    public let length: Int64
    /// SHA-256 of the bytes.
    public let sha256: Digest32
    /// CRC32C of the bytes.
    public let crc32c: UInt32
    /// The commitment-chain link `L[index]` (native), if computed.
    public let chainLink: Digest32?
    /// The `Idempotency-Key` for this attempt, if any.
    public let idempotencyKey: String?

    /// A part.
    public init(
        index: Int, offset: Int64, body: HTTPRequestBody, length: Int64, sha256: Digest32, crc32c: UInt32,
        chainLink: Digest32? = nil, idempotencyKey: String? = nil
    ) {
        self.index = index
        self.offset = offset
        self.body = body
        self.length = length
        self.sha256 = sha256
        self.crc32c = crc32c
        self.chainLink = chainLink
        self.idempotencyKey = idempotencyKey
    }
}
