/// A backend that carries a run of consecutive parts in one request, so that the request size can follow the link
/// while the upload's unit (the part: what is hashed, acknowledged, resumed) stays fixed. IETF resumable upload and
/// tus append the parts' bytes in one `PATCH`; S3 has no runs (each part is its own request).
public protocol RunSendingBackend: UploadBackend {
    /// The most parts one request of `upload` may carry (1: this upload takes no runs, e.g. tus concatenation).
    func maximumRunParts(of upload: RemoteUpload) -> Int

    /// Sends `parts` (consecutive indices in order, at least one, at most `maximumRunParts(of:)`) in one request.
    /// Returns the receipts of the parts the destination acknowledged, in order: all of them, or a prefix with the
    /// failure that stopped the rest (`RunOutcome.stoppedBy`). Throws when none was acknowledged.
    func send(run parts: [UploadPart], to upload: RemoteUpload) async throws(TransportError) -> RunOutcome
}

/// What the destination acknowledged of one run.
public struct RunOutcome: Sendable {
    /// The receipts of the acknowledged parts, in order, starting at the run's first part.
    public let receipts: [PartReceipt]
    /// Why the rest of the run was not acknowledged; nil when every part was.
    public let stoppedBy: TransportError?

    /// An outcome.
    public init(receipts: [PartReceipt], stoppedBy: TransportError? = nil) {
        self.receipts = receipts
        self.stoppedBy = stoppedBy
    }
}

extension RunSendingBackend {
    /// Checks that `parts` are consecutive, non-empty and within the run limit; returns the first part and the run's
    /// byte length.
    func checkRun(_ parts: [UploadPart], of upload: RemoteUpload) throws(TransportError) -> (
        first: UploadPart, length: Int64
    ) {
        guard let first = parts.first, parts.count <= maximumRunParts(of: upload) else {
            throw TransportError(
                .invalidArgument, "a run holds 1...\(maximumRunParts(of: upload)) parts, not \(parts.count)")
        }
        var length: Int64 = 0
        for (offset, part) in parts.enumerated() {
            guard part.index == first.index + offset, part.offset == first.offset + length else {
                throw TransportError(.invalidArgument, "the parts of a run must be consecutive and in order")
            }
            length += part.length
        }
        return (first, length)
    }
}

extension HTTPRequestBody {
    /// The bodies one after another, when every one is held in memory (bytes or chunks); nil if any is a stream.
    public static func concatenating(_ bodies: [HTTPRequestBody]) -> HTTPRequestBody? {
        var pieces: [HTTPBodyPiece] = []
        var length: Int64 = 0
        for body in bodies {
            switch body.storage {
            case .none: continue
            case .stream: return nil
            case .pieces(let more, let count):
                pieces += more
                length += count
            }
        }
        return pieces.isEmpty ? .empty : HTTPRequestBody(storage: .pieces(pieces, length: length))
    }
}
