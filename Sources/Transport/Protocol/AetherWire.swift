import AetherIntegrity

/// Names of the native protocol `aether/1` (`docs/PROTOCOL.md` sections 2-7): header fields, media types, paths
/// and the bounds both sides check before parsing.
public enum AetherWire {
    /// The protocol version this code speaks, sent as `Aether-Protocol: 1` and as `v=1` in the capabilities.
    public static let version = 1

    /// `Aether-Protocol`: on every native request and answer.
    public static let protocolField = "Aether-Protocol"
    /// `Aether-Capabilities` (section 2).
    public static let capabilitiesField = "Aether-Capabilities"
    /// `Aether-Chunk` (section 3.2).
    public static let chunkField = "Aether-Chunk"
    /// `Aether-Receipt` (section 3.2).
    public static let receiptField = "Aether-Receipt"
    /// `Aether-Run-Receipt` (section 3.2.1).
    public static let runReceiptField = "Aether-Run-Receipt"
    /// `Aether-Received` (section 3.4).
    public static let receivedField = "Aether-Received"

    /// The create request's body (section 3.1).
    public static let createMediaType = "application/aether-upload+json"
    /// The status document (section 3.5).
    public static let statusMediaType = "application/aether-status+json"
    /// The challenge request and answer (section 3.6).
    public static let challengeMediaType = "application/aether-challenge+json"
    /// A proof-of-possession response (section 3.7).
    public static let possessionMediaType = "application/aether-possession"
    /// The complete request (section 3.8).
    public static let completeMediaType = "application/aether-complete+json"
    /// The receipt (section 3.8).
    public static let receiptMediaType = "application/aether-receipt+json"
    /// RFC 9457 problem details (section 7).
    public static let problemMediaType = "application/problem+json"

    /// The largest JSON document either side parses (64 KiB); longer ones are `.tooLarge` before parsing. A status
    /// document of 1,048,576 chunks carries a 128 KiB bitmap (175 KiB of base64), so status documents have their own
    /// bound, `maximumStatusDocumentBytes`.
    public static let maximumDocumentBytes = 64 << 10
    /// The largest status document parsed: two bitmaps of `maximumChunks` bits in base64, plus the rest.
    public static let maximumStatusDocumentBytes = 2 * ((maximumChunks / 8 + 2) / 3 * 4) + (16 << 10)
    /// The most chunks one upload may have on any receiver (section 2's default `max-chunks`); documents that
    /// count chunks are refused above it.
    public static let maximumChunks = 1 << 20
    /// The largest size, offset or length a document or field carries (RFC 9651's 15-digit integers).
    public static let maximumInteger: Int64 = 999_999_999_999_999
    /// Chunk sizes are multiples of this (16 KiB).
    public static let chunkAlignment: Int64 = 16 << 10
    /// The most indices one challenge may name (section 3.6).
    public static let maximumChallengeIndices = 64
    /// The spot-check version both sides speak (`"v":2` in challenges and answers, `challenge-v=2` in the
    /// capabilities, section 3.6): the answer is a MAC over the stored bytes (`ByzantineChallenge`).
    public static let spotCheckVersion = ByzantineChallenge.version
}
