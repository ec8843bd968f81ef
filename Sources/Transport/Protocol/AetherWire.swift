import AetherIntegrity

/// Names of the native protocol `aether/1` (`docs/PROTOCOL.md` sections 2-7): header fields, media types, paths
/// and the bounds both sides check before parsing.
package enum AetherWire {
    /// The protocol version this code speaks, sent as `Aether-Protocol: 1` and as `v=1` in the capabilities.
    package static let version = 1

    /// `Aether-Protocol`: on every native request and answer.
    package static let protocolField = "Aether-Protocol"
    /// `Aether-Capabilities` (section 2).
    package static let capabilitiesField = "Aether-Capabilities"
    /// `Aether-Chunk` (section 3.2).
    package static let chunkField = "Aether-Chunk"
    /// `Aether-Receipt` (section 3.2).
    package static let receiptField = "Aether-Receipt"
    /// `Aether-Run-Receipt` (section 3.2.1).
    package static let runReceiptField = "Aether-Run-Receipt"
    /// `Aether-Received` (section 3.4).
    package static let receivedField = "Aether-Received"
    /// `Aether-Partial` (section 3.2.2): what the receiver holds of a chunk a continuation named.
    package static let partialField = "Aether-Partial"
    /// `Aether-Batch` (section 3.10): `files=N, document=L` on a batch of whole small files.
    package static let batchField = "Aether-Batch"
    /// `Aether-Partials: ?1` on `GET /uploads/{id}` (section 3.5): the status document is to list the received
    /// prefixes of cut chunks (`partials`). A client of before section 3.2.2 does not send it and gets the document
    /// it parses.
    package static let partialsRequestField = "Aether-Partials"
    /// `Aether-Chain-Link: ?1` on `GET /uploads/{id}` (section 3.5): the status document is to carry `chainLink`,
    /// the head of the chain over the checked prefix. A client of before it parses documents strictly and refused
    /// every status answer that carried the member (`unknownMember`), so a receiver adds it only when asked.
    package static let chainLinkRequestField = "Aether-Chain-Link"

    /// The create request's body (section 3.1).
    package static let createMediaType = "application/aether-upload+json"
    /// The status document (section 3.5).
    package static let statusMediaType = "application/aether-status+json"
    /// The challenge request and answer (section 3.6).
    package static let challengeMediaType = "application/aether-challenge+json"
    /// A proof-of-possession response (section 3.7).
    package static let possessionMediaType = "application/aether-possession"
    /// The complete request (section 3.8).
    package static let completeMediaType = "application/aether-complete+json"
    /// The receipt (section 3.8).
    package static let receiptMediaType = "application/aether-receipt+json"
    /// A batch of whole small files (section 3.10): its document, then every file's bytes.
    package static let batchMediaType = "application/aether-batch"
    /// The answer to a batch: a receipt or a problem per file (section 3.10).
    package static let batchReceiptMediaType = "application/aether-batch-receipt+json"
    /// A capture manifest served by a receiver that checked it (section 3.11).
    package static let captureMediaType = "application/aether-capture+json"
    /// `Aether-Capture-Root` (section 3.11): the root of the capture manifest served, 64 lowercase hex digits.
    package static let captureRootField = "Aether-Capture-Root"
    /// RFC 9457 problem details (section 7).
    package static let problemMediaType = "application/problem+json"

    /// The largest JSON document either side parses (64 KiB); longer ones are `.tooLarge` before parsing. A status
    /// document of 1,048,576 chunks carries a 128 KiB bitmap (175 KiB of base64), so status documents have their own
    /// bound, `maximumStatusDocumentBytes`.
    package static let maximumDocumentBytes = 64 << 10
    /// The largest status document parsed: two bitmaps of `maximumChunks` bits in base64, `maximumPartials` partials
    /// of two 15-digit integers each, plus the rest.
    package static let maximumStatusDocumentBytes =
        2 * ((maximumChunks / 8 + 2) / 3 * 4) + maximumPartials * 40 + (16 << 10)
    /// The most partials (received prefixes of cut chunks, section 3.2.2) one status document lists.
    package static let maximumPartials = 256
    /// The most chunks one upload may have on any receiver (section 2's default `max-chunks`); documents that
    /// count chunks are refused above it.
    package static let maximumChunks = 1 << 20
    /// The largest size, offset or length a document or field carries (RFC 9651's 15-digit integers).
    package static let maximumInteger: Int64 = 999_999_999_999_999
    /// The most files one batch may carry on any receiver (section 3.10; a receiver advertises `max-batch` up to it).
    package static let maximumBatchFiles = 256
    /// The largest batch document (its files' creations and claims; 256 files take about 150 KiB).
    package static let maximumBatchDocumentBytes = 512 << 10
    /// The largest batch answer parsed (a receipt of about 400 bytes or a problem of at most 2.2 KiB a file).
    package static let maximumBatchAnswerBytes = maximumBatchFiles * (3 << 10) + (16 << 10)
    /// Chunk sizes are multiples of this (16 KiB).
    package static let chunkAlignment: Int64 = 16 << 10
    /// The most indices one challenge may name (section 3.6).
    package static let maximumChallengeIndices = 64
    /// The spot-check version both sides speak (`"v":2` in challenges and answers, `challenge-v=2` in the
    /// capabilities, section 3.6): the answer is a MAC over the stored bytes (`ByzantineChallenge`).
    package static let spotCheckVersion = ByzantineChallenge.version
}
