import AetherIO

/// IETF resumable uploads (draft-ietf-httpbis-resumable-upload) over `HTTPClient`, in two versions chosen by
/// `version`: interop version 6 (draft-05, what tusd and tus-js-client speak) and the latest draft's. The wire
/// format, each draft section it follows and the error mapping are in docs/PROTOCOL.md section 4.
///
/// One upload resource takes appends one after another at the server's offset, so parts go in order and never in
/// parallel (`parallelParts == false`, resume query `.offset`). Creation sends `Upload-Complete: ?0` and the
/// object's length; every part is a `PATCH` with `Upload-Complete: ?0`; `complete` sends the empty `PATCH` with
/// `Upload-Complete: ?1` and the whole object's `Repr-Digest`. A 409, a 5xx or a connection closed during an
/// append is answered by asking the server its offset (`HEAD`) and sending the rest of the part from there when
/// the part's body is held in memory. `Upload-Limit` (from `OPTIONS`, the 104 or the creation answer) bounds the
/// capabilities; an upload the limits cannot take is cancelled (`DELETE`) and reported.
public struct IETFResumableBackend: UploadBackend {
    /// What this server allows (the limits announced to `discover`, else this client's own bounds).
    public let capabilities: BackendCapabilities
    /// Runs (appends from the server's offset).
    public var features: BackendFeatures { BackendFeatures(runs: self) }
    /// The draft version spoken.
    public let version: IETFInteropVersion
    /// Where uploads are created.
    public let creationURL: String
    /// The limits the server announced before creation, if known.
    public let limits: IETFUploadLimits?

    private let resource: HTTPUploadResource
    private let options: IETFBackendOptions

    /// The media type of an append's content.
    public static let partialUploadMediaType = "application/partial-upload"

    /// Asks the resource at `creationURL` for its limits (`OPTIONS` without `Upload-Complete`) and builds a backend
    /// bounded by them. A server that answers without a valid `Upload-Limit` gives a backend without limits.
    public static func discover(
        creationURL: String, client: HTTPClient, version: IETFInteropVersion = .latest,
        options: IETFBackendOptions = IETFBackendOptions()
    ) async throws(TransportError) -> IETFResumableBackend {
        let unbounded = try IETFResumableBackend(
            creationURL: creationURL, client: client, version: version, options: options)
        let response = try await unbounded.exchange("OPTIONS", unbounded.creationURL)
        guard (200..<300).contains(response.status) else { throw unbounded.error(for: response, "OPTIONS") }
        return try IETFResumableBackend(
            creationURL: creationURL, client: client, version: version, limits: unbounded.limits(in: response.headers),
            options: options)
    }

    /// A backend for uploads created at `creationURL`, bounded by `limits` when known.
    public init(
        creationURL: String, client: HTTPClient, version: IETFInteropVersion = .latest,
        limits: IETFUploadLimits? = nil, options: IETFBackendOptions = IETFBackendOptions()
    ) throws(TransportError) {
        guard options.maximumPartSize > 0, options.recoveryAttempts >= 0 else {
            throw TransportError(.invalidArgument, "the part size must be positive and the recovery count not negative")
        }
        resource = try HTTPUploadResource(
            creationURL: creationURL, peer: "the server", headers: options.headers,
            protocolFields: HTTPHeaders([("Upload-Draft-Interop-Version", String(version.rawValue))]),
            version: options.version, timeouts: options.timeouts, responseBodyLimit: 64 << 10,
            send: { (request) async throws(TransportError) -> HTTPResponse in try await client.send(request) })
        self.creationURL = resource.creationURL
        self.version = version
        self.limits = limits
        self.options = options
        let own = BackendCapabilities(
            minimumPartSize: 1, maximumPartSize: options.maximumPartSize, maximumParts: Int(Int32.max),
            equalParts: false, parallelParts: false, outOfOrderParts: false, checksums: [.sha256],
            resumeQuery: .offset, maximumObjectSize: 999_999_999_999_999)
        var capabilities = limits?.capabilities(own) ?? own
        capabilities.minimumPartSize = min(capabilities.minimumPartSize, capabilities.maximumPartSize)
        self.capabilities = capabilities
    }

    // MARK: UploadBackend

    public func create(_ description: UploadDescription) async throws(TransportError) -> RemoteUpload {
        try check(description)
        return try await creation(description, sending: nil).upload
    }

    /// Creation with the first part as the creation request's content; what the server did not take follows by
    /// `PATCH`.
    public func create(_ description: UploadDescription, sending firstPart: UploadPart) async throws(TransportError)
        -> (upload: RemoteUpload, receipt: PartReceipt)
    {
        try check(description)
        try check(firstPart, size: description.size, partSize: description.layout.partSize)
        guard firstPart.index == 0 else {
            throw TransportError(.invalidArgument, "the part sent with the creation must be part 0")
        }
        let receipt = PartReceipt(index: 0, length: firstPart.length)
        guard firstPart.length > 0 else { return (try await creation(description, sending: nil).upload, receipt) }
        let created = try await creation(description, sending: firstPart)
        if created.offset < firstPart.length {
            try await transfer(firstPart, to: created.upload, from: created.offset, bodySent: true)
        }
        return (created.upload, receipt)
    }

    public func progress(of upload: RemoteUpload) async throws(TransportError) -> RemoteProgress {
        if isExpired(upload) { return .gone }
        do throws(TransportError) {
            let state = try await head(upload)
            return .offset(state.offset, complete: state.complete)
        } catch {
            if error.code == .gone { return .gone }
            throw error
        }
    }

    public func send(_ part: UploadPart, to upload: RemoteUpload) async throws(TransportError) -> PartReceipt {
        try check(part, size: upload.size, partSize: upload.partSize)
        try checkNotExpired(upload)
        if part.length > 0 { try await transfer(part, to: upload, from: part.offset, bodySent: false) }
        return PartReceipt(index: part.index, length: part.length)
    }

    public func complete(_ upload: RemoteUpload, summary: CompletionSummary) async throws(TransportError)
        -> UploadReceipt
    {
        try checkNotExpired(upload)
        let state = try await head(upload)
        guard state.offset == upload.size else {
            throw TransportError(
                .conflict, "the server holds \(state.offset) of \(upload.size) bytes: the upload is not complete")
        }
        if state.complete {
            // Completed before this request (an earlier completing PATCH whose answer was lost, or an earlier run):
            // the digest of that answer is gone. A Repr-Digest on the HEAD answer is checked; without one the
            // receipt says the SHA-256 was not checked, never that it matched.
            return try Self.alreadyComplete(upload, state.reprDigest, summary)
        }
        var headers = HTTPHeaders([
            ("Upload-Offset", "\(upload.size)"), ("Upload-Complete", StructuredField.serialize(true)),
            ("Content-Type", Self.partialUploadMediaType), ("Repr-Digest", Self.digestField(summary.fileSHA256)),
        ])
        if upload.sizeDeferred == true { headers.add("Upload-Length", "\(upload.size)") }
        let response = try await exchange("PATCH", upload.location, headers)
        if (400..<500).contains(response.status), response.status != 404, response.status != 410,
            let after = try? await head(upload), after.complete, after.offset == upload.size
        {
            // Refused because it is complete already: a completing PATCH sent before (libcurl sends a request again
            // when a reused connection died under it) completed it, and its answer was lost.
            return try Self.alreadyComplete(upload, after.reprDigest, summary)
        }
        guard (200..<300).contains(response.status) else {
            if response.status == 422 || Self.problemName(response) == "digest-mismatch" {
                // The server compared the Repr-Digest sent with the bytes it stores and they differ (the completing
                // PATCH carries no content of its own that could have been damaged): final, never retried.
                throw TransportError(
                    .receiptMismatch,
                    "the server refused the completing PATCH (\(response.status)): the bytes it stores do not have the "
                        + "object's SHA-256 (\(summary.fileSHA256.hex.prefix(16))...) sent in Repr-Digest")
            }
            throw error(for: response, "completing PATCH")
        }
        if version == .latest, Self.boolean(response.headers, "Upload-Complete") == false {
            throw TransportError(.protocolViolation, "the answer to the completing PATCH says the upload is incomplete")
        }
        if let stored = Self.integer(response.headers, "Upload-Offset"), stored != upload.size {
            throw TransportError(
                .receiptMismatch,
                "the answer to the completing PATCH reports \(stored) bytes stored, not the \(upload.size) sent")
        }
        var serverDigest: Digest32?
        if let reported = Self.reprDigest(response.headers) {
            try Self.check(reported, summary.fileSHA256, "answer to the completing PATCH")
            serverDigest = reported
        }
        return UploadReceipt(location: upload.location, size: upload.size, serverSHA256: serverDigest)
    }

    /// The receipt of an upload the server reports complete before this client's completing PATCH was answered:
    /// the `Repr-Digest` of the `HEAD` answer is checked when there is one; otherwise the receipt says the SHA-256
    /// was not checked.
    static func alreadyComplete(_ upload: RemoteUpload, _ reported: Digest32?, _ summary: CompletionSummary)
        throws(TransportError) -> UploadReceipt
    {
        guard let reported else {
            var receipt = UploadReceipt(location: upload.location, size: upload.size)
            receipt.unchecked = ["sha256"]
            receipt.uncheckedReason =
                "the upload was already complete at the server and its HEAD answer has no Repr-Digest"
            return receipt
        }
        try check(reported, summary.fileSHA256, "HEAD answer of the completed upload")
        return UploadReceipt(location: upload.location, size: upload.size, serverSHA256: reported)
    }

    /// A `Repr-Digest` the server reported, compared with the object's SHA-256; another one is `.receiptMismatch`
    /// (final: the server says it stored other bytes).
    static func check(_ reported: Digest32, _ ours: Digest32, _ answer: String) throws(TransportError) {
        guard reported != ours else { return }
        throw TransportError(
            .receiptMismatch,
            "the Repr-Digest of the \(answer) (sha-256 \(reported.hex.prefix(16))...) differs from the object's "
                + "SHA-256 (\(ours.hex.prefix(16))...)")
    }

    public func abort(_ upload: RemoteUpload) async throws(TransportError) {
        let response = try await exchange("DELETE", upload.location)
        switch response.status {
        case 200..<300, 404, 410: return
        case 405: throw TransportError(.remoteRejected, "the server does not support cancelling uploads (405)")
        default: throw error(for: response, "DELETE")
        }
    }

    // MARK: Requests

    func exchange(_ method: String, _ url: String, _ extra: HTTPHeaders = HTTPHeaders(), body: HTTPRequestBody = .empty)
        async throws(TransportError) -> HTTPResponse
    {
        try await resource.exchange(method, url, extra, body: body)
    }

    /// The creation request: the upload resource, what the server holds after it, and its limits enforced.
    private func creation(_ description: UploadDescription, sending part: UploadPart?) async throws(TransportError)
        -> (upload: RemoteUpload, offset: Int64)
    {
        var headers = HTTPHeaders([("Upload-Complete", StructuredField.serialize(false))])
        // A growing file's length is given by the completing PATCH (`Upload-Length` there).
        if !description.sizeDeferred { headers.add("Upload-Length", "\(description.size)") }
        if let contentType = description.contentType { headers.add("Content-Type", contentType) }
        if let sha256 = description.sha256 { headers.add("Repr-Digest", Self.digestField(sha256)) }
        if let part { headers.add("Content-Digest", Self.digestField(part.sha256)) }
        let response = try await exchange(options.creationMethod, creationURL, headers, body: part?.body ?? .empty)
        let announced = try announcement(response)
        let sent = part?.length ?? 0
        switch response.status {
        case 200..<300:
            if version == .latest, Self.boolean(response.headers, "Upload-Complete") == true {
                throw TransportError(
                    .remoteRejected, "the server answered the creation as a finished upload (\(response.status))")
            }
            let location: String
            if let text = try Self.single(response.headers, "Location") {
                location = try resolve(text)
                if let announced, announced.location != location {
                    try? await cancel(location)
                    throw TransportError(.protocolViolation, "the Location of the 104 and of the final answer differ")
                }
            } else if let announced {
                location = announced.location
            } else {
                throw TransportError(.protocolViolation, "the creation answer has no Location")
            }
            let limits = limits(in: response.headers) ?? announced?.limits
            var upload = RemoteUpload(
                location: location, uploadID: nil, size: description.size, partSize: description.layout.partSize,
                expires: limits?.lifetime.map { options.clock.wallWholeSeconds() + $0 })
            if description.sizeDeferred { upload.sizeDeferred = true }
            try await enforce(limits, description, upload)
            let offset = Self.integer(response.headers, "Upload-Offset")
            if let offset, offset != sent {
                throw TransportError(
                    .protocolViolation, "the creation answer reports \(offset) bytes after \(sent) were sent")
            }
            if offset == nil, version == .draft05 {
                throw TransportError(.protocolViolation, "the creation answer has no valid Upload-Offset")
            }
            return (upload, sent)
        case 500..<600 where announced != nil:
            // The 104 named the resource: resume from what it holds (latest draft section 4.2.1).
            guard let announced else { throw error(for: response, "creation") }
            var upload = RemoteUpload(
                location: announced.location, uploadID: nil, size: description.size,
                partSize: description.layout.partSize,
                expires: announced.limits?.lifetime.map { options.clock.wallWholeSeconds() + $0 })
            if description.sizeDeferred { upload.sizeDeferred = true }
            try await enforce(announced.limits, description, upload)
            let state = try await head(upload)
            guard state.offset <= sent else {
                throw TransportError(.protocolViolation, "the server holds more bytes than were sent at creation")
            }
            return (upload, state.offset)
        default:
            throw error(for: response, "creation")
        }
    }

    /// The upload resource a `104 (Upload Resumption Supported)` of this interop version announced, if any. 104s
    /// of another or no interop version are ignored (draft-05 section 4.2, latest draft appendix).
    private func announcement(_ response: HTTPResponse) throws(TransportError) -> (
        location: String, limits: IETFUploadLimits?
    )? {
        var found: (location: String, limits: IETFUploadLimits?)?
        for interim in response.informational where interim.status == 104 {
            guard Self.integer(interim.headers, "Upload-Draft-Interop-Version") == Int64(version.rawValue) else {
                continue
            }
            let limits = limits(in: interim.headers)
            guard let text = try Self.single(interim.headers, "Location") else {
                if let limits, found != nil { found?.limits = limits }
                continue
            }
            let location = try resolve(text)
            if let found, found.location != location {
                throw TransportError(.protocolViolation, "two 104 answers name different upload resources")
            }
            found = (location, limits ?? found?.limits)
        }
        return found
    }

    /// Cancels `upload` and throws when `limits` cannot take it (latest draft section 4.1.4: "cancel the upload").
    private func enforce(_ limits: IETFUploadLimits?, _ description: UploadDescription, _ upload: RemoteUpload)
        async throws(TransportError)
    {
        guard let limits else { return }
        let layout = description.layout
        var problem: TransportError?
        if let maximum = limits.maximumSize, description.size > maximum {
            problem = TransportError(
                .tooLarge, "the server's max-size \(maximum) is below the object's \(description.size) bytes")
        } else if let maximum = limits.maximumAppendSize, min(layout.partSize, description.size) > maximum {
            problem = TransportError(
                .tooLarge, "the server's max-append-size \(maximum) is below the part size \(layout.partSize)")
        } else if let minimum = limits.minimumAppendSize, layout.partCount > 1, layout.partSize < minimum {
            problem = TransportError(
                .remoteRejected, "the server's min-append-size \(minimum) is above the part size \(layout.partSize)")
        } else if let lifetime = limits.lifetime, lifetime <= 0 {
            problem = TransportError(.gone, "the server gave the upload resource no lifetime")
        }
        if let problem {
            try? await cancel(upload.location)
            throw problem
        }
    }

    private func cancel(_ location: String) async throws(TransportError) {
        _ = try await exchange("DELETE", location)
    }

    /// Offset retrieval (`HEAD`): the offset, whether the upload is complete, and a `Repr-Digest` if the answer
    /// has one.
    private func head(_ upload: RemoteUpload) async throws(TransportError) -> (
        offset: Int64, complete: Bool, reprDigest: Digest32?
    ) {
        let response = try await exchange("HEAD", upload.location)
        guard response.status == 200 || response.status == 204 else { throw error(for: response, "HEAD") }
        guard let offset = Self.integer(response.headers, "Upload-Offset") else {
            throw TransportError(.protocolViolation, "the HEAD answer has no valid Upload-Offset")
        }
        // A growing upload's `size` is what the client has sent so far: the server may hold more, and no length.
        let deferred = upload.sizeDeferred == true
        guard deferred || offset <= upload.size else {
            throw TransportError(
                .protocolViolation, "the server reports \(offset) bytes of an upload of \(upload.size)")
        }
        if !deferred, let length = Self.integer(response.headers, "Upload-Length"), length != upload.size {
            throw TransportError(.protocolViolation, "the server reports a length of \(length), not \(upload.size)")
        }
        return (offset, Self.boolean(response.headers, "Upload-Complete") ?? false, Self.reprDigest(response.headers))
    }

    /// The server's offset after a failed append. The connection that failed may take the next request with it
    /// (a reset seen late, a pooled connection the server closed), so a HEAD that fails the same way is asked
    /// again while recoveries remain.
    private func offsetAfterFailure(_ upload: RemoteUpload, recoveries: inout Int) async throws(TransportError)
        -> Int64
    {
        while true {
            do {
                return try await head(upload).offset
            } catch {
                guard error.code == .connectionClosed || error.code == .timedOut,
                    recoveries < options.recoveryAttempts
                else { throw error }
                recoveries += 1
            }
        }
    }

    /// Appends `part` from `start` (the server's offset) to its end, recovering from a 409, a 5xx or a closed or
    /// stalled connection by asking the server its offset when the body can be sent again from there.
    ///
    /// A connection that stalls without closing (no byte moves for the idle limit) is abandoned and the rest sent
    /// from the server's offset. The server may still hold that stalled append and refuse the next one with 409 at
    /// its own offset: that is not the offset changing, so it is sent again with back-off for up to
    /// `options.heldAppendWait` until the server lets go. A 409 after which the offset did change resumes from it.
    func transfer(
        _ part: UploadPart, to upload: RemoteUpload, from start: Int64, bodySent: Bool, sendsDigest: Bool = true
    ) async throws(TransportError) {
        var append = OffsetAppendRecovery(
            partStart: part.offset, partEnd: part.offset + part.length, offset: start, bodySent: bodySent,
            moveLimit: options.recoveryAttempts, heldWait: options.heldAppendWait, server: "the server",
            request: "append", requests: "appends")
        var recoveries = 0
        // The last failure of the connection, for the message if the append cannot be finished.
        var lastFailure: TransportError?
        while !append.isComplete {
            let offset = append.offset
            let body = try append.remaining(of: part.body)
            var headers = HTTPHeaders([
                ("Upload-Offset", "\(offset)"), ("Upload-Complete", StructuredField.serialize(false)),
                ("Content-Type", Self.partialUploadMediaType),
            ])
            if sendsDigest {
                // The rest of a part sent again carries the digest of the rest, so the server checks it as it would
                // have checked the whole part.
                if offset == part.offset {
                    headers.add("Content-Digest", Self.digestField(part.sha256))
                } else if let rest = body.heldBytes {
                    headers.add("Content-Digest", Self.digestField(SHA256.hash(rest)))
                }
            }
            let end = append.partEnd
            let response: HTTPResponse
            do {
                response = try await exchange("PATCH", upload.location, headers, body: body)
            } catch {
                guard error.code == .connectionClosed || error.code == .timedOut,
                    OffsetAppendRecovery.canResend(part.body), recoveries < options.recoveryAttempts
                else { throw Self.after(lastFailure, error) }
                recoveries += 1
                lastFailure = error
                append.resume(at: try await offsetAfterFailure(upload, recoveries: &recoveries))
                continue
            }
            switch response.status {
            case 200..<300:
                if version == .latest, Self.boolean(response.headers, "Upload-Complete") == true {
                    throw TransportError(
                        .remoteRejected, "the server answered an append as the end of the upload (\(response.status))")
                }
                if let reported = Self.integer(response.headers, "Upload-Offset"), reported != end {
                    throw TransportError(
                        .protocolViolation, "the append answer reports \(reported) bytes, not \(end)")
                }
                append.resume(at: end)
            case 409:
                let now = try await offsetAfterFailure(upload, recoveries: &recoveries)
                let delay: Double?
                do {
                    delay = try append.conflicted(serverOffset: now)
                } catch {
                    throw Self.after(lastFailure, error)
                }
                if let delay { try await HeldAppendWait.sleep(delay) }
            case 507:
                throw Self.after(lastFailure, error(for: response, "PATCH"))
            case 422 where headers["Content-Digest"] != nil:
                // The server found the bytes do not match the Content-Digest sent with them (`aether serve` answers
                // 422 digest-mismatch and keeps none of them): damaged on the way, so sent again, as a native chunk
                // refused with 422 is.
                throw TransportError(
                    .checksumMismatch,
                    "the server found the append's bytes differ from its Content-Digest (422): damaged on the way")
            case 500..<600:
                guard recoveries < options.recoveryAttempts else {
                    throw Self.after(lastFailure, error(for: response, "PATCH"))
                }
                recoveries += 1
                append.resume(at: try await offsetAfterFailure(upload, recoveries: &recoveries))
            default:
                throw error(for: response, "PATCH")
            }
        }
    }

    /// `error`, its message prefixed with the connection failure before it (what started the recovery), if any.
    static func after(_ failure: TransportError?, _ error: TransportError) -> TransportError {
        guard let failure, failure.message != error.message else { return error }
        return TransportError(
            error.code, "after an append failed (\(failure.code): \(failure.message)), \(error.message)",
            errno: error.errno)
    }

    // MARK: Checks

    private func check(_ description: UploadDescription) throws(TransportError) {
        guard description.size == description.layout.objectSize else {
            throw TransportError(.invalidArgument, "the description's size and layout disagree")
        }
        guard description.size <= capabilities.maximumObjectSize else {
            throw TransportError(
                .tooLarge,
                "the object of \(description.size) bytes exceeds the server's \(capabilities.maximumObjectSize)")
        }
        if let contentType = description.contentType, !HTTPHeaders.isSendable(name: "Content-Type", value: contentType)
        {
            throw TransportError(.invalidArgument, "the content type has CR, LF or NUL")
        }
    }

    func check(_ part: UploadPart, size: Int64, partSize: Int64) throws(TransportError) {
        try HTTPUploadResource.checkLayout(part, size: size, partSize: partSize)
    }

    private func isExpired(_ upload: RemoteUpload) -> Bool {
        HTTPUploadResource.isExpired(upload, clock: options.clock)
    }

    func checkNotExpired(_ upload: RemoteUpload) throws(TransportError) {
        if isExpired(upload) {
            throw TransportError(.gone, "the upload resource's lifetime (Upload-Limit) has ended")
        }
    }

    /// `reference` resolved against the creation URL; another origin than the creation URL's is refused.
    private func resolve(_ reference: String) throws(TransportError) -> String {
        try resource.resolve(reference)
    }

    func limits(in headers: HTTPHeaders) -> IETFUploadLimits? {
        let values = headers.values("Upload-Limit")
        guard !values.isEmpty else { return nil }
        return IETFUploadLimits(field: values.joined(separator: ", "), version: version)
    }

    func error(for response: HTTPResponse, _ what: String) -> TransportError {
        guard response.status == 413, let limits = limits(in: response.headers) else {
            return resource.error(for: response, what)
        }
        return resource.error(for: response, what, note: ": limits \(limits.summary)")
    }

    /// The name of an Aether problem document (`urn:aether:problem:NAME`) in the answer, if it carries one.
    static func problemName(_ response: HTTPResponse) -> String? {
        guard !response.body.isEmpty else { return nil }
        // Advisory: the status decides the error; a malformed problem only loses its name.
        return (try? ProblemDocument(json: response.body))?.name
    }

    // MARK: Fields

    /// `sha-256=:<base64>:` (RFC 9530 section 2 and 3, a Dictionary with one Byte Sequence).
    static func digestField(_ digest: Digest32) -> String { "sha-256=" + StructuredField.serialize(digest.bytes) }

    /// The `sha-256` member of a `Repr-Digest` field, if present and well formed.
    static func reprDigest(_ headers: HTTPHeaders) -> Digest32? {
        let values = headers.values("Repr-Digest")
        guard !values.isEmpty, let members = StructuredField.dictionary(values.joined(separator: ", ")),
            let member = members.first(where: { $0.key == "sha-256" }),
            case .item(.bytes(let bytes)) = member.value, bytes.count == 32
        else { return nil }
        return try? Digest32(bytes: bytes)
    }

    /// A non-negative Integer Item field; nil when absent or malformed (the drafts: "ignored").
    static func integer(_ headers: HTTPHeaders, _ name: String) -> Int64? {
        let values = headers.values(name)
        guard !values.isEmpty, case .integer(let value)? = StructuredField.item(values.joined(separator: ", ")),
            value >= 0
        else { return nil }
        return value
    }

    /// A Boolean Item field; nil when absent or malformed.
    static func boolean(_ headers: HTTPHeaders, _ name: String) -> Bool? {
        let values = headers.values(name)
        guard !values.isEmpty, case .boolean(let value)? = StructuredField.item(values.joined(separator: ", "))
        else { return nil }
        return value
    }

    /// The one value of `name`; two or more differing values are a protocol violation.
    private static func single(_ headers: HTTPHeaders, _ name: String) throws(TransportError) -> String? {
        let values = headers.values(name)
        guard let first = values.first else { return nil }
        guard values.allSatisfy({ $0 == first }) else {
            throw TransportError(.protocolViolation, "the answer has several different \(name) fields")
        }
        return first
    }
}
