import AetherIO

/// A backend that carries a run of consecutive parts in one request, so that the request size can follow the link
/// while the upload's unit (the part: what is hashed, acknowledged, resumed) stays fixed. IETF resumable upload and
/// tus append the parts' bytes in one `PATCH`; S3 has no runs (each part is its own request).
package protocol RunSendingBackend: UploadBackend {
    /// The most parts one request of `upload` may carry (1: this upload takes no runs, e.g. tus concatenation).
    func maximumRunParts(of upload: RemoteUpload) -> Int

    /// Sends `parts` (consecutive indices in order, at least one, at most `maximumRunParts(of:)`) in one request.
    /// Returns the receipts of the parts the destination acknowledged, in order: all of them, or a prefix with the
    /// failure that stopped the rest (`RunOutcome.stoppedBy`). Throws when none was acknowledged.
    func send(run parts: [UploadPart], to upload: RemoteUpload) async throws(TransportError) -> RunOutcome

    /// Whether the destination keeps the received prefix of a part whose request was cut, and takes a run that
    /// continues from it (native `resume-chunk`, `docs/PROTOCOL.md` 3.2.2). Default: false.
    func continuesCutParts(of upload: RemoteUpload) -> Bool

    /// What the destination holds of `upload` (`progress(of:)`) with the received prefixes of cut parts it keeps.
    /// Default: `progress(of:)` and no prefixes.
    func holdings(of upload: RemoteUpload) async throws(TransportError) -> RunHoldings

    /// Sends `parts` as `send(run:to:)` does, the first of them from byte `from` on (0 < `from` < its length): the
    /// destination holds its first `from` bytes (`holdings(of:)`). A destination that holds another prefix answers
    /// before the body with what it holds: an outcome without receipts whose `heldPrefix` says it. Default: refused
    /// (`.invalidArgument`), as by a destination that keeps no prefixes.
    func send(run parts: [UploadPart], from: Int64, to upload: RemoteUpload) async throws(TransportError)
        -> RunOutcome
}

/// What the destination holds of an upload, with the received prefixes of parts whose requests were cut.
package struct RunHoldings: Sendable, Hashable {
    /// The acknowledged parts or bytes.
    package let progress: RemoteProgress
    /// Bytes held from the start of each part that is not acknowledged, by part index (never 0, never the whole part).
    package let prefixes: [Int: Int64]

    /// Holdings.
    package init(progress: RemoteProgress, prefixes: [Int: Int64] = [:]) {
        self.progress = progress
        self.prefixes = prefixes
    }
}

/// What the destination acknowledged of one run.
package struct RunOutcome: Sendable {
    /// The receipts of the acknowledged parts, in order, starting at the run's first part.
    package let receipts: [PartReceipt]
    /// Why the rest of the run was not acknowledged; nil when every part was.
    package let stoppedBy: TransportError?
    /// A continuation the destination refused before its body because it holds another prefix of the first part
    /// (`409 partial-mismatch`): the bytes it holds of it (0: none). Nil otherwise.
    package let heldPrefix: Int64?

    /// An outcome.
    package init(receipts: [PartReceipt], stoppedBy: TransportError? = nil, heldPrefix: Int64? = nil) {
        self.receipts = receipts
        self.stoppedBy = stoppedBy
        self.heldPrefix = heldPrefix
    }
}

extension RunSendingBackend {
    package func continuesCutParts(of upload: RemoteUpload) -> Bool { false }

    package func holdings(of upload: RemoteUpload) async throws(TransportError) -> RunHoldings {
        RunHoldings(progress: try await progress(of: upload))
    }

    package func send(run parts: [UploadPart], from: Int64, to upload: RemoteUpload) async throws(TransportError)
        -> RunOutcome
    {
        guard from == 0 else {
            throw TransportError(.invalidArgument, "this destination takes no continuation of a cut part")
        }
        return try await send(run: parts, to: upload)
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
    /// The body without its first `count` bytes, copied out (a continuation's first part, sent once in a while);
    /// nil for a stream or when `count` is outside 0 ... the body's length.
    public func droppingFirst(_ count: Int64) -> HTTPRequestBody? {
        guard case .pieces(let pieces, let length) = storage, count >= 0, count <= length else { return nil }
        guard count > 0 else { return self }
        var skip = Int(count)
        var kept: [HTTPBodyPiece] = []
        for piece in pieces {
            guard skip > 0 else {
                kept.append(piece)
                continue
            }
            guard skip < piece.count else {
                skip -= piece.count
                continue
            }
            let rest: [UInt8]
            switch piece {
            case .bytes(let bytes): rest = Array(bytes[skip...])
            case .chunk(let chunk):
                rest = unsafe chunk.withUnsafeBytes { raw in
                    unsafe Array(UnsafeRawBufferPointer(rebasing: raw[skip...]))
                }
            }
            kept.append(.bytes(rest))
            skip = 0
        }
        let remaining = length - count
        return remaining == 0 ? .empty : HTTPRequestBody(storage: .pieces(kept, length: remaining))
    }

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
