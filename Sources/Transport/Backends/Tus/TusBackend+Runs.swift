/// Runs (docs/PROTOCOL.md 5.3): the parts' bytes appended in one `PATCH` at the first part's offset. A 409 reads the
/// server's offset and continues from there. Uploads laid out as partial uploads (concatenation) take no runs.
extension TusBackend: RunSendingBackend {
    /// One part per request under concatenation; else as many as fit in 64 MiB, at most 64.
    package func maximumRunParts(of upload: RemoteUpload) -> Int {
        guard upload.partLocations == nil, upload.partSize > 0 else { return 1 }
        return Int(max(1, min(64, (64 << 20) / upload.partSize)))
    }

    package func send(run parts: [UploadPart], to upload: RemoteUpload) async throws(TransportError) -> RunOutcome {
        let (first, length) = try checkRun(parts, of: upload)
        for part in parts { try check(part, size: upload.size, partSize: upload.partSize) }
        try checkNotExpired(upload)
        guard let body = HTTPRequestBody.concatenating(parts.map(\.body)) else {
            throw TransportError(.invalidArgument, "a run's parts must be held in memory")
        }
        if upload.partLocations != nil, parts.count == 1 {
            return RunOutcome(receipts: [try await send(first, to: upload)])
        }
        guard upload.partLocations == nil else {
            throw TransportError(.invalidArgument, "an upload of partial uploads takes one part per request")
        }
        try await transfer(body, to: upload.location, partStart: first.offset, partEnd: first.offset + length)
        return RunOutcome(receipts: parts.map { PartReceipt(index: $0.index, length: $0.length) })
    }
}
