import AetherIO
import FoundationEssentials

/// tus 1.0.0 (https://tus.io/protocols/resumable-upload): core (HEAD, PATCH), creation, creation-with-upload,
/// termination, checksum (sha1, crc32), concatenation and expiration, over `HTTPClient`.
///
/// Built from the server's `OPTIONS` answer (`discover`), so `capabilities` say what this server allows: parts in
/// parallel and in any order only with concatenation (each part its own partial upload, joined by a final
/// upload in `complete`); otherwise one PATCH after another at the server's offset. A 409 is answered by asking
/// the server its offset (HEAD) and sending from there when the part's body is held in memory. The wire format
/// and error mapping are in docs/PROTOCOL.md ("tus 1.0").
public struct TusBackend: UploadBackend {
    /// What this server allows.
    public let capabilities: BackendCapabilities
    /// Runs (PATCHes from the server's offset).
    public var features: BackendFeatures { BackendFeatures(runs: self) }
    /// The server's `OPTIONS` answer.
    public let server: TusServerInfo
    /// Where uploads are created (`POST`).
    public let creationURL: String
    /// The checksum sent with each PATCH, if any.
    public let checksum: TusChecksumAlgorithm?

    /// Who answers, in messages.
    static let peer = "the tus server"

    private let resource: HTTPUploadResource
    private let options: TusBackendOptions

    /// Asks the server at `creationURL` what it offers (`OPTIONS`, without `Tus-Resumable`) and builds a backend
    /// for it. Not a tus server or no 1.0.0: `.protocolViolation` or `.versionUnsupported`.
    public static func discover(
        creationURL: String, client: HTTPClient, options: TusBackendOptions = TusBackendOptions()
    ) async throws(TransportError) -> TusBackend {
        _ = try parseCreationURL(creationURL)
        let response = try await client.send(
            HTTPRequest(
                method: "OPTIONS", url: creationURL, headers: options.headers, version: options.version,
                timeouts: options.timeouts, responseBodyLimit: 64 << 10))
        guard response.status == 200 || response.status == 204 else { throw error(for: response, "OPTIONS") }
        return try TusBackend(
            creationURL: creationURL, client: client, server: TusServerInfo(headers: response.headers),
            options: options)
    }

    /// A backend for a server whose `OPTIONS` answer is `server`. The server must offer creation.
    public init(
        creationURL: String, client: HTTPClient, server: TusServerInfo, options: TusBackendOptions = TusBackendOptions()
    ) throws(TransportError) {
        _ = try Self.parseCreationURL(creationURL)
        guard server.offers("creation") else {
            throw TransportError(.remoteRejected, "the tus server does not offer the creation extension")
        }
        guard options.maximumPartSize > 0, options.maximumConcatenatedParts > 0 else {
            throw TransportError(.invalidArgument, "the part size and the concatenated part count must be positive")
        }
        resource = try HTTPUploadResource(
            creationURL: creationURL, peer: Self.peer, headers: options.headers,
            protocolFields: HTTPHeaders([("Tus-Resumable", TusServerInfo.version)]), version: options.version,
            timeouts: options.timeouts, responseBodyLimit: 64 << 10,
            send: { (request) async throws(TransportError) -> HTTPResponse in try await client.send(request) })
        self.creationURL = resource.creationURL
        self.server = server
        self.options = options
        self.checksum = server.checksumAlgorithm(preferring: options.checksumAlgorithms)
        self.capabilities = server.capabilities(options)
    }

    // MARK: UploadBackend

    public func create(_ description: UploadDescription) async throws(TransportError) -> RemoteUpload {
        let metadata = try checkedMetadata(description)
        if description.sizeDeferred { return try await createDeferred(description, metadata: metadata) }
        if usesConcatenation(description.layout) {
            let locations = try await createPartials(description.layout, firstBody: nil)
            return RemoteUpload(
                location: creationURL, uploadID: nil, size: description.size, partSize: description.layout.partSize,
                partLocations: locations.urls, expires: locations.expires, metadata: metadata)
        }
        var headers = HTTPHeaders([("Upload-Length", "\(description.size)")])
        if !metadata.isEmpty { headers.add("Upload-Metadata", try TusMetadata.encode(metadata)) }
        let created = try await post(headers, body: .empty)
        return RemoteUpload(
            location: created.location, uploadID: nil, size: description.size, partSize: description.layout.partSize,
            expires: created.expires, metadata: metadata)
    }

    /// Creation-with-upload when the server offers it: the first part travels in the creation `POST` (of the
    /// first partial upload under concatenation); what the server did not take follows by PATCH.
    public func create(_ description: UploadDescription, sending firstPart: UploadPart) async throws(TransportError)
        -> (upload: RemoteUpload, receipt: PartReceipt)
    {
        guard server.offers("creation-with-upload"), firstPart.length > 0 else {
            let upload = try await create(description)
            return (upload, try await send(firstPart, to: upload))
        }
        let metadata = try checkedMetadata(description)
        let layout = description.layout
        try check(firstPart, size: description.size, partSize: layout.partSize)
        guard firstPart.index == 0 else {
            throw TransportError(.invalidArgument, "the part sent with the creation must be part 0")
        }
        let receipt = PartReceipt(index: 0, length: firstPart.length)
        if usesConcatenation(layout) {
            let created = try await createPartials(layout, firstBody: firstPart)
            try await transfer(
                firstPart.body, to: created.urls[0], partStart: 0, partEnd: firstPart.length,
                knownOffset: created.firstOffset)
            let upload = RemoteUpload(
                location: creationURL, uploadID: nil, size: description.size, partSize: layout.partSize,
                partLocations: created.urls, expires: created.expires, metadata: metadata)
            return (upload, receipt)
        }
        var headers = HTTPHeaders([("Upload-Length", "\(description.size)")])
        if !metadata.isEmpty { headers.add("Upload-Metadata", try TusMetadata.encode(metadata)) }
        let created = try await post(withBody: firstPart, headers)
        try await transfer(
            firstPart.body, to: created.location, partStart: 0, partEnd: firstPart.length,
            knownOffset: created.offset)
        let upload = RemoteUpload(
            location: created.location, uploadID: nil, size: description.size, partSize: layout.partSize,
            expires: created.expires, metadata: metadata)
        return (upload, receipt)
    }

    public func progress(of upload: RemoteUpload) async throws(TransportError) -> RemoteProgress {
        if isExpired(upload) { return .gone }
        do throws(TransportError) {
            if let partLocations = upload.partLocations {
                var receipts: [PartReceipt] = []
                for (index, url) in partLocations.enumerated() {
                    let length = partLength(index, of: upload)
                    let state = try await head(url)
                    guard state.offset <= length, state.length == nil || state.length == length else {
                        throw TransportError(.protocolViolation, "partial upload \(index) reports another length")
                    }
                    if state.offset == length { receipts.append(PartReceipt(index: index, length: length)) }
                }
                return .parts(receipts)
            }
            let state = try await head(upload.location)
            if upload.sizeDeferred == true, state.length == nil { return .offset(state.offset, complete: false) }
            guard state.offset <= upload.size, state.length == nil || state.length == upload.size else {
                throw TransportError(
                    .protocolViolation, "the server reports \(state.offset) bytes of an upload of \(upload.size)")
            }
            return .offset(state.offset, complete: state.offset == upload.size)
        } catch {
            if error.code == .gone { return .gone }
            throw error
        }
    }

    public func send(_ part: UploadPart, to upload: RemoteUpload) async throws(TransportError) -> PartReceipt {
        try check(part, size: upload.size, partSize: upload.partSize)
        try checkNotExpired(upload)
        if let partLocations = upload.partLocations {
            guard part.index < partLocations.count else {
                throw TransportError(.invalidArgument, "part \(part.index) has no partial upload")
            }
            try await transfer(part.body, to: partLocations[part.index], partStart: 0, partEnd: part.length)
        } else {
            try await transfer(
                part.body, to: upload.location, partStart: part.offset, partEnd: part.offset + part.length)
        }
        return PartReceipt(index: part.index, length: part.length)
    }

    public func complete(_ upload: RemoteUpload, summary: CompletionSummary) async throws(TransportError)
        -> UploadReceipt
    {
        guard let partLocations = upload.partLocations else {
            let state = try await head(upload.location)
            guard state.offset == upload.size else {
                throw TransportError(
                    .conflict, "the server holds \(state.offset) of \(upload.size) bytes: the upload is not complete")
            }
            if let length = state.length, length != upload.size {
                throw TransportError(
                    .receiptMismatch, "the server records an upload length of \(length), not the \(upload.size) sent")
            }
            if upload.sizeDeferred == true, state.length == nil { try await declareLength(upload) }
            return UploadReceipt(location: upload.location, size: upload.size)
        }
        try checkNotExpired(upload)
        guard summary.parts.map(\.index) == Array(0..<partLocations.count) else {
            throw TransportError(.invalidArgument, "the summary does not hold one receipt per partial upload, in order")
        }
        var headers = HTTPHeaders([("Upload-Concat", "final;" + partLocations.joined(separator: " "))])
        if let metadata = upload.metadata, !metadata.isEmpty {
            headers.add("Upload-Metadata", try TusMetadata.encode(metadata))
        }
        let created = try await post(headers, body: .empty)
        let state = try await head(created.location)
        guard state.offset == upload.size, state.length == nil || state.length == upload.size else {
            throw TransportError(
                .receiptMismatch,
                "the final upload holds \(state.offset) bytes of a length of \(state.length.map { "\($0)" } ?? "none"), "
                    + "not the \(upload.size) sent")
        }
        await removePartials(partLocations)
        return UploadReceipt(location: created.location, size: upload.size)
    }

    /// Deletes the partial uploads a verified final upload was made of, where the server offers termination: tus
    /// lets a server keep them (a partial may join several finals), so otherwise every byte stays stored twice until
    /// they expire. Best effort: the final is complete whatever these answers say.
    private func removePartials(_ locations: [String]) async {
        guard server.offers("termination") else { return }
        for url in locations { _ = try? await exchange("DELETE", url) }
    }

    public func abort(_ upload: RemoteUpload) async throws(TransportError) {
        guard server.offers("termination") else {
            throw TransportError(
                .remoteRejected, "the tus server does not offer termination; the upload expires on the server")
        }
        for url in upload.partLocations ?? [upload.location] {
            let response = try await exchange("DELETE", url)
            switch response.status {
            case 200, 204, 404, 410: continue
            default: throw Self.error(for: response, "DELETE")
            }
        }
    }

    // MARK: Requests

    private struct Created {
        let location: String
        let offset: Int64?
        let expires: Int64?
    }

    /// Sends one request with `Tus-Resumable` and the caller's headers.
    private func exchange(
        _ method: String, _ url: String, _ headers: HTTPHeaders = HTTPHeaders(), body: HTTPRequestBody = .empty
    ) async throws(TransportError) -> HTTPResponse {
        try await resource.exchange(method, url, headers, body: body)
    }

    /// A creation `POST`: 201 with a same-origin `Location`.
    private func post(_ headers: HTTPHeaders, body: HTTPRequestBody) async throws(TransportError) -> Created {
        let response = try await exchange("POST", creationURL, headers, body: body)
        guard response.status == 201 else { throw Self.error(for: response, "POST") }
        guard let location = response.headers["Location"] else {
            throw TransportError(.protocolViolation, "the creation answer has no Location")
        }
        let offset = try response.headers["Upload-Offset"].map { text throws(TransportError) in
            try Self.offset(text)
        }
        return Created(location: try resolve(location), offset: offset, expires: try Self.expiry(response.headers))
    }

    /// A creation `POST` that carries `part`'s bytes (creation-with-upload).
    private func post(withBody part: UploadPart, _ headers: HTTPHeaders) async throws(TransportError) -> Created {
        var all = headers
        all.add("Content-Type", "application/offset+octet-stream")
        if let field = checksumField(part.body) { all.add("Upload-Checksum", field) }
        let created = try await post(all, body: part.body)
        guard let offset = created.offset, offset <= part.length else {
            throw TransportError(
                .protocolViolation, "a creation with upload was answered without a valid Upload-Offset")
        }
        return created
    }

    /// Creates one partial upload per part; the first carries `firstBody` when given.
    private func createPartials(_ layout: PartLayout, firstBody: UploadPart?) async throws(TransportError) -> (
        urls: [String], expires: Int64?, firstOffset: Int64?
    ) {
        var urls: [String] = []
        var expires: Int64?
        var firstOffset: Int64?
        for index in 0..<layout.partCount {
            let range = layout.range(ofPart: index)
            let headers = HTTPHeaders([("Upload-Concat", "partial"), ("Upload-Length", "\(range.count)")])
            let created: Created
            if index == 0, let firstBody {
                created = try await post(withBody: firstBody, headers)
                firstOffset = created.offset
            } else {
                created = try await post(headers, body: .empty)
            }
            urls.append(created.location)
            if let value = created.expires { expires = min(expires ?? value, value) }
        }
        return (urls, expires, firstOffset)
    }

    /// What the server holds at `url` (`HEAD`): 404 and 410 are `.gone`.
    private func head(_ url: String) async throws(TransportError) -> (offset: Int64, length: Int64?) {
        let response = try await exchange("HEAD", url)
        guard response.status == 200 || response.status == 204 else { throw Self.error(for: response, "HEAD") }
        guard let text = response.headers["Upload-Offset"] else {
            throw TransportError(.protocolViolation, "the HEAD answer has no Upload-Offset")
        }
        let length = try response.headers["Upload-Length"].map { text throws(TransportError) in
            try Self.offset(text)
        }
        return (try Self.offset(text), length)
    }

    /// PATCHes `body` (the bytes `partStart..<partEnd` of the resource at `url`) from the server's offset until it
    /// holds `partEnd`. A 409 asks the server its offset and continues from there; bytes the server already holds
    /// are not sent again. A body that cannot be re-read (a stream) is sent at most once. A 409 after which the
    /// offset is the one just sent means the server still holds an earlier PATCH (this client's own, on a
    /// connection that stalled without closing): it is sent again with back-off for up to
    /// `options.heldAppendWait`.
    func transfer(
        _ body: HTTPRequestBody, to url: String, partStart: Int64, partEnd: Int64, knownOffset: Int64? = nil
    ) async throws(TransportError) {
        var append = OffsetAppendRecovery(
            partStart: partStart, partEnd: partEnd, offset: knownOffset.map { $0 + partStart } ?? partStart,
            bodySent: false, moveLimit: 3, heldWait: options.heldAppendWait, server: "the tus server",
            request: "PATCH", requests: "PATCHes")
        var stalls = 0
        while !append.isComplete {
            let offset = append.offset
            let remaining = try append.remaining(of: body)
            var headers = HTTPHeaders([
                ("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", "\(offset)"),
            ])
            if let field = checksumField(remaining) { headers.add("Upload-Checksum", field) }
            let response = try await exchange("PATCH", url, headers, body: remaining)
            switch response.status {
            case 200, 204:
                guard let text = response.headers["Upload-Offset"] else {
                    throw TransportError(.protocolViolation, "the PATCH answer has no Upload-Offset")
                }
                let next = try Self.offset(text)
                guard next >= offset, next <= partEnd else {
                    throw TransportError(
                        .protocolViolation, "the PATCH answer moved the offset from \(offset) to \(next)")
                }
                stalls = next == offset ? stalls + 1 : 0
                guard stalls < 3 else {
                    throw TransportError(.protocolViolation, "the server took none of three PATCH bodies")
                }
                append.resume(at: next)
            case 409:
                if let delay = try append.conflicted(serverOffset: try await head(url).offset) {
                    try await HeldAppendWait.sleep(delay)
                }
            default: throw Self.error(for: response, "PATCH")
            }
        }
    }

    // MARK: Deferred length (creation-defer-length)

    /// Creates an upload whose length is given later (`Upload-Defer-Length: 1`), when the server offers
    /// `creation-defer-length`; otherwise `.protocolUnsupported`. Parts then go in order on the one resource.
    private func createDeferred(_ description: UploadDescription, metadata: [String: String])
        async throws(TransportError) -> RemoteUpload
    {
        guard server.offers("creation-defer-length") else {
            throw TransportError(
                .protocolUnsupported,
                "the tus server does not offer creation-defer-length: a file of unknown size (--follow) cannot be "
                    + "uploaded to it")
        }
        var headers = HTTPHeaders([("Upload-Defer-Length", "1")])
        if !metadata.isEmpty { headers.add("Upload-Metadata", try TusMetadata.encode(metadata)) }
        let created = try await post(headers, body: .empty)
        var upload = RemoteUpload(
            location: created.location, uploadID: nil, size: 0, partSize: description.layout.partSize,
            expires: created.expires, metadata: metadata)
        upload.sizeDeferred = true
        return upload
    }

    /// Tells the server the final length: an empty `PATCH` at the end with `Upload-Length`.
    private func declareLength(_ upload: RemoteUpload) async throws(TransportError) {
        let headers = HTTPHeaders([
            ("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", "\(upload.size)"),
            ("Upload-Length", "\(upload.size)"),
        ])
        let response = try await exchange("PATCH", upload.location, headers, body: .empty)
        guard response.status == 200 || response.status == 204 else {
            throw Self.error(for: response, "PATCH with Upload-Length")
        }
    }

    // MARK: Checks

    private func usesConcatenation(_ layout: PartLayout) -> Bool {
        server.usesConcatenation(options) && layout.partCount > 1
            && layout.partCount <= options.maximumConcatenatedParts
    }

    /// The description's metadata with its content type as `filetype` (the key tus clients use), after the size
    /// checks: over `Tus-Max-Size` is `.tooLarge` without asking the server.
    private func checkedMetadata(_ description: UploadDescription) throws(TransportError) -> [String: String] {
        guard description.size >= 0, description.layout.objectSize == description.size else {
            throw TransportError(.invalidArgument, "the description's size and layout disagree")
        }
        if let maximum = server.maximumSize, description.size > maximum {
            throw TransportError(
                .tooLarge, "an upload of \(description.size) bytes is over the server's Tus-Max-Size of \(maximum)")
        }
        var metadata = description.metadata
        if let type = description.contentType, metadata["filetype"] == nil { metadata["filetype"] = type }
        _ = try TusMetadata.encode(metadata)
        return metadata
    }

    func check(_ part: UploadPart, size: Int64, partSize: Int64) throws(TransportError) {
        try HTTPUploadResource.checkLayout(part, size: size, partSize: partSize)
    }

    private func partLength(_ index: Int, of upload: RemoteUpload) -> Int64 {
        let start = Int64(index) * upload.partSize
        return min(upload.partSize, upload.size - start)
    }

    private func isExpired(_ upload: RemoteUpload) -> Bool {
        HTTPUploadResource.isExpired(upload, clock: options.clock)
    }

    func checkNotExpired(_ upload: RemoteUpload) throws(TransportError) {
        if isExpired(upload), let expires = upload.expires {
            throw TransportError(.gone, "the upload expired on the server at \(HTTPDate.format(expires))")
        }
    }

    private func checksumField(_ body: HTTPRequestBody) -> String? {
        guard let checksum, let digest = checksum.digest(of: body) else { return nil }
        return "\(checksum.rawValue) \(Data(digest).base64EncodedString())"
    }

    /// A `Location` resolved against the creation URL; another origin is refused.
    private func resolve(_ location: String) throws(TransportError) -> String {
        try resource.resolve(location)
    }

    private static func parseCreationURL(_ text: String) throws(TransportError) -> ResourceURL {
        do {
            return try ResourceURL(absolute: text)
        } catch {
            throw TransportError(.invalidArgument, "the creation URL is not an absolute http(s) URL")
        }
    }

    // MARK: Wire values

    /// A non-negative decimal integer header value (at most 18 digits); nil otherwise.
    static func integer(_ text: String) -> Int64? {
        let value = text.trimmingASCIISpaces()
        guard !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int64(value)
    }

    private static func offset(_ text: String) throws(TransportError) -> Int64 {
        guard let value = integer(text) else {
            throw TransportError(.protocolViolation, "Upload-Offset or Upload-Length is not a non-negative integer")
        }
        return value
    }

    /// `Upload-Expires` as seconds since 1970; a value in none of HTTP's date forms is `.protocolViolation`.
    static func expiry(_ headers: HTTPHeaders) throws(TransportError) -> Int64? {
        guard let text = headers["Upload-Expires"] else { return nil }
        guard let value = HTTPDate.parse(text) else {
            throw TransportError(.protocolViolation, "Upload-Expires is not an HTTP date")
        }
        return value
    }

    /// The error for a status the exchange did not expect.
    static func error(for response: HTTPResponse, _ method: String) -> TransportError {
        switch response.status {
        case 412:
            let versions = String((response.headers["Tus-Version"] ?? "none").prefix(64))
            return TransportError(
                .versionUnsupported,
                "the tus server refused version \(TusServerInfo.version) (412); it speaks \(versions)")
        case 460:
            return TransportError(.checksumMismatch, "the tus server's checksum of the \(method) body differs (460)")
        default: return HTTPUploadResource.error(for: response, method, peer: peer)
        }
    }
}
