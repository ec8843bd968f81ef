import AetherIO

/// Run requests (`docs/PROTOCOL.md` section 3.2.1): consecutive chunks in one `PUT` to the first chunk's resource,
/// `Aether-Chunk` naming the count and every chunk's CRC32C and SHA-256, and the link of the run's last chunk. The
/// receiver stores and acknowledges each chunk as the body streams; its `Aether-Run-Receipt` names the chunks it
/// holds, also in a problem answer that stopped the run part way, so only the rest is sent again. A receiver that
/// keeps a cut chunk's received prefix (`resume-chunk`, section 3.2.2) takes a run continuing from it.
extension NativeBackend: RunSendingBackend {
    /// What the receiver advertises as `max-run` (1 when it takes no runs), at most 64.
    package func maximumRunParts(of upload: RemoteUpload) -> Int { max(1, min(64, server.maximumRun)) }

    package func send(run parts: [UploadPart], to upload: RemoteUpload) async throws(TransportError) -> RunOutcome {
        let (first, length) = try checkRun(parts, of: upload)
        if parts.count == 1 { return RunOutcome(receipts: [try await send(first, to: upload)]) }
        try checkLayout(parts, of: upload)
        guard let body = HTTPRequestBody.concatenating(parts.map(\.body)) else {
            throw TransportError(.invalidArgument, "a run's chunks must be held in memory")
        }
        return try await put(run: parts, length: length, from: nil, body: body, to: upload)
    }

    /// Whether the receiver keeps a cut chunk's received prefix and takes continuations (`resume-chunk`).
    package func continuesCutParts(of upload: RemoteUpload) -> Bool { server.resumesChunks }

    /// The status document asked with its `partials` (`Aether-Partials: ?1`) when the receiver keeps them; else
    /// `progress(of:)`.
    package func holdings(of upload: RemoteUpload) async throws(TransportError) -> RunHoldings {
        guard server.resumesChunks else { return RunHoldings(progress: try await progress(of: upload)) }
        let status: NativeStatusDocument
        do { status = try await self.status(of: upload, partials: true) } catch {
            if error.code == .gone { return RunHoldings(progress: .gone) }
            throw error
        }
        let progress = Self.progress(status)
        guard status.state == .open else { return RunHoldings(progress: progress) }
        let prefixes = (status.partials ?? []).filter { !status.received[$0.index] }
        return RunHoldings(
            progress: progress,
            prefixes: Dictionary(prefixes.map { ($0.index, $0.received) }, uniquingKeysWith: { first, _ in first }))
    }

    /// A continuation (section 3.2.2): the run's header names every chunk whole and `from`; the body carries the
    /// first chunk from byte `from` on (copied out of its buffer), then the others whole. A `409 partial-mismatch`
    /// gives an outcome whose `heldPrefix` is what the receiver holds of the first chunk (its `Aether-Partial`).
    package func send(run parts: [UploadPart], from: Int64, to upload: RemoteUpload) async throws(TransportError)
        -> RunOutcome
    {
        let (first, length) = try checkRun(parts, of: upload)
        guard from > 0 else { return try await send(run: parts, to: upload) }
        guard server.resumesChunks else {
            throw TransportError(.invalidArgument, "the receiver takes no continuation of a cut chunk")
        }
        guard from < first.length else {
            throw TransportError(.invalidArgument, "a continuation starts inside its first chunk, not at \(from)")
        }
        try checkLayout(parts, of: upload)
        guard let rest = first.body.droppingFirst(from),
            let body = HTTPRequestBody.concatenating([rest] + parts.dropFirst().map(\.body))
        else {
            throw TransportError(.invalidArgument, "a run's chunks must be held in memory")
        }
        return try await put(run: parts, length: length, from: from, body: body, to: upload)
    }

    /// Checks that every part of a run is the upload's chunk of its index, with a body of its length.
    private func checkLayout(_ parts: [UploadPart], of upload: RemoteUpload) throws(TransportError) {
        let chunks = NativeCreateRequest.chunkCount(size: upload.size, chunkSize: upload.partSize)
        for part in parts {
            try HTTPUploadResource.checkLayout(part, size: upload.size, partSize: upload.partSize, partCount: chunks)
        }
    }

    /// One run `PUT` and its answer: the receipts of the acknowledged prefix, with the failure that stopped the rest.
    private func put(
        run parts: [UploadPart], length: Int64, from: Int64?, body: HTTPRequestBody, to upload: RemoteUpload
    ) async throws(TransportError) -> RunOutcome {
        let first = parts[0]
        let last = parts[parts.count - 1]
        let header = AetherRunHeader(
            length: length, crc32c: parts.map(\.crc32c), sha256: parts.map(\.sha256), link: last.chainLink,
            from: from)
        var headers = HTTPHeaders([(AetherWire.chunkField, header.fieldValue)])
        if let key = first.idempotencyKey { headers.add("Idempotency-Key", key) }
        let what =
            (parts.count == 1 ? "chunk \(first.index)" : "run of chunks \(first.index)...\(last.index)")
            + (from.map { " from byte \($0)" } ?? "")
        let response = try await exchange("PUT", url(upload, "/chunks/\(first.index)"), headers, body: body)
        if let from, response.status == 409, Self.problem(in: response)?.name == "partial-mismatch" {
            let held = try partialHeld(response, index: first.index, length: first.length, what: what)
            // The receiver answers this before it reads the body: what it holds is not `from`.
            guard held != from else {
                throw TransportError(.protocolViolation, "the receiver refused the \(what) while holding \(from) bytes")
            }
            return RunOutcome(receipts: [], stoppedBy: error(for: response, what), heldPrefix: held)
        }
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

    /// The bytes of chunk `index` a `409 partial-mismatch` says the receiver holds (`Aether-Partial`): 0 ... below
    /// the chunk's length.
    private func partialHeld(_ response: HTTPResponse, index: Int, length: Int64, what: String)
        throws(TransportError) -> Int64
    {
        let values = response.headers.values(AetherWire.partialField)
        guard let value = values.first, values.count == 1 else {
            throw TransportError(.protocolViolation, "the refusal of the \(what) has no single Aether-Partial")
        }
        let partial: AetherPartialHeader
        do { partial = try AetherPartialHeader(parsing: value) } catch {
            throw TransportError(
                .protocolViolation,
                "the Aether-Partial of the \(what) is malformed (\(error.code)\(Self.memberNote(error)))")
        }
        guard partial.index == index, partial.received < length else {
            throw TransportError(.protocolViolation, "the Aether-Partial of the \(what) names another chunk or more")
        }
        return partial.received
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
