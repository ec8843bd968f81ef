public import AetherIO

/// One append to a byte stream (an IETF `PATCH` or a tus `PATCH`, or the body of a creation).
public struct AppendRequest: Sendable, Hashable {
    /// A per-append digest (tus `Upload-Checksum`, IETF `Content-Digest`) over exactly this request's bytes.
    public struct Digest: Sendable, Hashable {
        /// The digest's algorithm.
        public enum Algorithm: String, Sendable, Hashable, CaseIterable {
            /// SHA-1 (20 bytes; tus `sha1`).
            case sha1
            /// SHA-256 (32 bytes; `sha-256`).
            case sha256
            /// CRC-32 ISO-HDLC, big-endian (4 bytes; tus `crc32`).
            case crc32
        }
        /// The algorithm.
        public var algorithm: Algorithm
        /// The digest's bytes.
        public var bytes: [UInt8]

        /// A digest.
        public init(algorithm: Algorithm, bytes: [UInt8]) {
            self.algorithm = algorithm
            self.bytes = bytes
        }
    }

    /// The offset the client sends at (`Upload-Offset`); must equal the stored one.
    public var offset: Int64
    /// The body's length when declared (`Content-Length`).
    public var length: Int64?
    /// IETF `Upload-Complete`: true when this append ends the upload, false when more follow, nil for tus (the
    /// upload completes when the offset reaches the size).
    public var completes: Bool?
    /// The object size declared with this append (IETF `Upload-Length`, tus deferred `Upload-Length`).
    public var uploadLength: Int64?
    /// A digest of this append's bytes; with one, a broken append is dropped whole.
    public var digest: Digest?
    /// The whole object's SHA-256 sent with the completing append (IETF `Repr-Digest`).
    public var objectSHA256: Digest32?

    /// An append.
    public init(
        offset: Int64, length: Int64? = nil, completes: Bool? = nil, uploadLength: Int64? = nil,
        digest: Digest? = nil, objectSHA256: Digest32? = nil
    ) {
        self.offset = offset
        self.length = length
        self.completes = completes
        self.uploadLength = uploadLength
        self.digest = digest
        self.objectSHA256 = objectSHA256
    }
}

/// How an append ended.
public struct AppendResult: Sendable, Hashable {
    /// The committed offset after it.
    public var offset: Int64
    /// Whether the upload is now complete (object visible).
    public var completed: Bool
    /// The receipt when complete.
    public var receipt: UploadReceiptRecord?

    /// A result.
    public init(offset: Int64, completed: Bool, receipt: UploadReceiptRecord?) {
        self.offset = offset
        self.completed = completed
        self.receipt = receipt
    }
}
