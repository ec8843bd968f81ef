public import AetherIO
public import AetherTransport

/// What one upload keeps between runs (written after each acknowledged part). Only digests, sizes and where the
/// upload lives: never file contents, tokens or keys. Serialised with `ResumeSnapshot+Codable` to canonical JSON.
public struct ResumeSnapshot: Sendable, Hashable {
    /// The format version this build writes and reads.
    public static let currentVersion = 1

    /// The file identity when the upload was created (level 1).
    public struct Fingerprint: Sendable, Hashable, Codable {
        /// Size in bytes.
        public var size: Int64
        /// Modification time in nanoseconds.
        public var modificationNanoseconds: Int64
        /// Inode number.
        public var inode: UInt64
        /// Device number.
        public var device: UInt64
        /// SHA-256 of the first 4 KiB, hex.
        public var headSHA256: String

        /// The fingerprint's fields.
        public init(_ fingerprint: FileFingerprint) {
            size = fingerprint.size
            modificationNanoseconds = fingerprint.modificationNanoseconds
            inode = fingerprint.inode
            device = fingerprint.device
            headSHA256 = fingerprint.headSHA256.hex
        }
    }

    /// One acknowledged part: its receipt and the SHA-256 of the bytes that were sent.
    public struct AcknowledgedPart: Sendable, Hashable, Codable {
        /// The destination's receipt.
        public var receipt: PartReceipt
        /// SHA-256 of the part's bytes, hex.
        public var sha256: String

        /// An acknowledged part.
        public init(receipt: PartReceipt, sha256: String) {
            self.receipt = receipt
            self.sha256 = sha256
        }
    }

    /// The format version.
    public var version: Int
    /// The file as given on the command line (the bytes, for `aether resume`).
    public var filePath: [UInt8]
    /// The destination as given.
    public var destination: String
    /// The protocol in use (stored by its name: `native`, `ietf`, `tus`, `s3`).
    public var mode: TransportMode
    /// The S3 endpoint URL, when one was given.
    public var endpoint: String?
    /// The file fingerprint (level 1).
    public var fingerprint: Fingerprint
    /// Where the upload lives at the destination.
    public var remote: RemoteUpload
    /// The part size.
    public var partSize: Int64
    /// The number of parts.
    public var partCount: Int
    /// The commitment chain's session id.
    public var chainSessionID: String
    /// The parts acknowledged so far, by index.
    public var acknowledged: [Int: AcknowledgedPart]

    /// The SHA-256 of each acknowledged part whose recorded digest parses.
    var acknowledgedDigests: [Int: Digest32] {
        acknowledged.compactMapValues { try? Digest32(hex: $0.sha256) }
    }
    /// When the upload was created, seconds since 1970.
    public var createdAt: Int64
    /// What the destination's receipt or check disagreed with, once a run ended in `.verificationFailed` (exit 4):
    /// a later run of this snapshot fails at once with it instead of completing what the destination holds, which
    /// may no longer be able to show the mismatch (an IETF upload already complete answers no digest again).
    public var receiptMismatch: String?

    /// A snapshot.
    public init(
        filePath: [UInt8], destination: String, mode: TransportMode, endpoint: String?, fingerprint: Fingerprint,
        remote: RemoteUpload, partSize: Int64, partCount: Int, chainSessionID: String,
        acknowledged: [Int: AcknowledgedPart] = [:], createdAt: Int64
    ) {
        self.version = Self.currentVersion
        self.filePath = filePath
        self.destination = destination
        self.mode = mode
        self.endpoint = endpoint
        self.fingerprint = fingerprint
        self.remote = remote
        self.partSize = partSize
        self.partCount = partCount
        self.chainSessionID = chainSessionID
        self.acknowledged = acknowledged
        self.createdAt = createdAt
    }

    /// Bytes acknowledged.
    public var acknowledgedBytes: Int64 { acknowledged.values.reduce(0) { $0 + $1.receipt.length } }
}
