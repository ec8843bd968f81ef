/// Runs (docs/PROTOCOL.md 4.4): the parts' bytes appended in one `PATCH` at the first part's offset. The answer
/// acknowledges every part of the run; a failure part way leaves the server's offset, which the append's 409 / HEAD
/// recovery reads, so only the bytes past it are sent again.
extension IETFResumableBackend: RunSendingBackend {
    /// As many parts as fit in the largest append the server takes, at most 64.
    package func maximumRunParts(of upload: RemoteUpload) -> Int {
        guard upload.partSize > 0 else { return 1 }
        return Int(max(1, min(64, capabilities.maximumPartSize / upload.partSize)))
    }

    package func send(run parts: [UploadPart], to upload: RemoteUpload) async throws(TransportError) -> RunOutcome {
        let (first, length) = try checkRun(parts, of: upload)
        for part in parts { try check(part, size: upload.size, partSize: upload.partSize) }
        try checkNotExpired(upload)
        guard let body = HTTPRequestBody.concatenating(parts.map(\.body)) else {
            throw TransportError(.invalidArgument, "a run's parts must be held in memory")
        }
        if length > 0 {
            // One part stands for the run; its Content-Digest would name the first part only, so none is sent (the
            // whole object's Repr-Digest is checked at completion).
            let run = UploadPart(
                index: first.index, offset: first.offset, body: body, length: length, sha256: first.sha256,
                crc32c: first.crc32c)
            try await transfer(run, to: upload, from: first.offset, bodySent: false, sendsDigest: false)
        }
        return RunOutcome(receipts: parts.map { PartReceipt(index: $0.index, length: $0.length) })
    }
}
