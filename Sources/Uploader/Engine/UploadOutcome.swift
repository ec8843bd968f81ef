public import AetherIO
public import AetherTransport

/// A finished upload: the destination's receipt and what was checked against it.
public struct UploadOutcome: Sendable, Hashable {
    /// The destination's receipt.
    public let receipt: UploadReceipt
    /// SHA-256 of the whole file, computed while it was read.
    public let sha256: Digest32
    /// The Merkle root over the parts' SHA-256 digests.
    public let merkleRoot: Digest32
    /// The commitment-chain head over the parts.
    public let chainHead: Digest32
    /// The checks made that passed: `byzantine-sample` when the destination proved it holds every sampled chunk's
    /// bytes (`spotChecks.passed`), then which of the receipt's digests it gave and matched (`sha256`,
    /// `merkle-root`, `chain-head`: values the destination claims, which it can compute from the chunk hashes and the
    /// client's completion request without holding the bytes); empty when the protocol returns none (then only the
    /// size and per-part acknowledgements were checked).
    public let serverVerified: [String]
    /// Parts sent in this run (a resume sends only those the destination did not hold).
    public let partsSent: Int
    /// Bytes sent in this run, retries included.
    public let bytesSent: Int64
    /// The number of parts.
    public let partCount: Int
    /// How the upload started.
    public let resume: ResumeReport
    /// Parity shards sent in this run (native, when parity was asked for or the link lost chunks).
    public var parityShardsSent: Int = 0
    /// What the Byzantine spot checks did (native); nil where none could be made (another protocol, a followed
    /// upload, dedup by proof of possession).
    public var spotChecks: SpotCheckReport? = nil
    /// The TCP congestion control the upload's connections ran on, when the system said (`bbr` unless
    /// `UploadConfiguration`'s HTTP client asked for another or the system refused it).
    public var congestionControl: String? = nil
}
