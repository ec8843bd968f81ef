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
    /// Which of the receipt's digests the destination gave and matched (`sha256`, `merkle-root`, `chain-head`);
    /// empty when the protocol returns none (then only the size and per-part acknowledgements were checked).
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
}
