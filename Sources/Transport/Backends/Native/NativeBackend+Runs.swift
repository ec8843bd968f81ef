import AetherIO

/// Run requests (`docs/PROTOCOL.md` section 3.2.1): consecutive chunks in one `PUT` to the first chunk's resource,
/// `Aether-Chunk` naming the count and every chunk's CRC32C and SHA-256, and the link of the run's last chunk. The
/// receiver stores and acknowledges each chunk as the body streams; its `Aether-Run-Receipt` names the chunks it
/// holds, also in a problem answer that stopped the run part way, so only the rest is sent again.
extension NativeBackend: RunSendingBackend {
    /// What the receiver advertises as `max-run` (1 when it takes no runs), at most 64.
    public func maximumRunParts(of upload: RemoteUpload) -> Int { max(1, min(64, server.maximumRun)) }

    public func send(run parts: [UploadPart], to upload: RemoteUpload) async throws(TransportError) -> RunOutcome {
        let (first, length) = try checkRun(parts, of: upload)
        if parts.count == 1 { return RunOutcome(receipts: [try await send(first, to: upload)]) }
        let chunks = NativeCreateRequest.chunkCount(size: upload.size, chunkSize: upload.partSize)
        for part in parts {
            let start = Int64(part.index) * upload.partSize
            guard part.index < chunks, part.offset == start,
                part.length == max(0, min(upload.partSize, upload.size - start)),
                part.body.length == nil || part.body.length == part.length
            else {
                throw TransportError(
                    .invalidArgument, "part \(part.index) does not match the upload's layout or its body")
            }
        }
        guard let body = HTTPRequestBody.concatenating(parts.map(\.body)) else {
            throw TransportError(.invalidArgument, "a run's chunks must be held in memory")
        }
        let last = parts[parts.count - 1]
        let header = AetherRunHeader(
            length: length, crc32c: parts.map(\.crc32c), sha256: parts.map(\.sha256), link: last.chainLink)
        var headers = HTTPHeaders([(AetherWire.chunkField, header.fieldValue)])
        if let key = first.idempotencyKey { headers.add("Idempotency-Key", key) }
        let what = "run of chunks \(first.index)...\(last.index)"
        let response = try await exchange("PUT", url(upload, "/chunks/\(first.index)"), headers, body: body)
        let held = try runReceipt(response, first: first.index, parts: parts, what: what)
        let receipts = parts.prefix(held).map {
            PartReceipt(index: $0.index, length: $0.length, checksumCRC32C: $0.crc32c)
        }
        if response.status == 200 || response.status == 201 {
            guard held == parts.count else {
                throw TransportError(.protocolViolation, "the answer to the \(what) acknowledges \(held) chunks")
            }
            return RunOutcome(receipts: receipts)
        }
        let failure = error(for: response, what)
        guard held > 0 else { throw failure }
        return RunOutcome(receipts: receipts, stoppedBy: failure)
    }

    /// How many chunks of the run, from the first, the answer's `Aether-Run-Receipt` acknowledges (0 without one on
    /// a problem answer), each checked against the SHA-256 sent.
    private func runReceipt(_ response: HTTPResponse, first: Int, parts: [UploadPart], what: String)
        throws(TransportError) -> Int
    {
        let values = response.headers.values(AetherWire.runReceiptField)
        guard let value = values.first, values.count == 1 else {
            guard values.isEmpty, !(200..<300).contains(response.status) else {
                throw TransportError(.protocolViolation, "the answer to the \(what) has no single Aether-Run-Receipt")
            }
            return 0
        }
        let receipt: AetherRunReceiptHeader
        do {
            receipt = try AetherRunReceiptHeader(parsing: value)
        } catch {
            throw TransportError(
                .protocolViolation,
                "the Aether-Run-Receipt of the \(what) is malformed (\(error.code)\(Self.memberNote(error)))")
        }
        guard receipt.index == first, receipt.sha256.count <= parts.count else {
            throw TransportError(.protocolViolation, "the Aether-Run-Receipt of the \(what) names other chunks")
        }
        for (digest, part) in zip(receipt.sha256, parts) where digest != part.sha256 {
            throw TransportError(
                .receiptMismatch,
                "the receipt of chunk \(part.index) names SHA-256 \(digest.hex.prefix(16))..., not the client's "
                    + "\(part.sha256.hex.prefix(16))...")
        }
        return receipt.sha256.count
    }
}
