import AetherIO
import Foundation

/// S3 multipart upload (AWS S3, Cloudflare R2, MinIO, Ceph RGW) as an `UploadBackend`.
///
/// `create` starts a multipart upload (`CreateMultipartUpload`), or nothing when the layout has one part: that part
/// is then sent as a single `PutObject`. `send` is `UploadPart` with `x-amz-checksum-crc32c` (not to Ceph, which
/// ignores it); `progress` pages through `ListParts`; `complete` is `CompleteMultipartUpload` (a 200 whose body is
/// an `<Error>` is a failure); `abort` is `AbortMultipartUpload`. Every request is signed with SigV4.
///
/// What is checked of the bytes follows the flavor (`S3Flavor.serverPartChecks`): where the server does not check
/// CRC32C (Ceph, an unknown server) parts are always signed with their SHA-256, never `UNSIGNED-PAYLOAD`; where no
/// server check is known (`.unknown`) each part also carries `Content-MD5` and the client compares the ETag
/// answered with the part's MD5, and the object's ETag with the MD5 of the parts' (`-N`). Each part's receipt
/// records the checks made (`PartReceipt.checks`) and the upload's receipt counts them (`UploadReceipt.checks`). 500, 502, 503 (`SlowDown`) and 504 are
/// retried with jittered exponential back-off, a bounded number of times, when the request body can be sent again
/// (always except a part streamed from `HTTPBodyStream` or pooled chunks, which the caller sends again).
public final class S3Backend: UploadBackend {
    /// How a request reaches the server (the HTTP client, or a script in tests).
    package typealias Transport = @Sendable (HTTPRequest) async throws(TransportError) -> HTTPResponse

    /// Whether part bodies are covered by the signature.
    public enum PayloadSigning: Sendable, Hashable {
        /// `x-amz-content-sha256` is the part's SHA-256 (already computed by the IO layer), so S3 checks it.
        case signed
        /// `UNSIGNED-PAYLOAD` (use over TLS only; the CRC32C still covers the bytes). Taken only by a flavor whose
        /// server checks the CRC32C; the others sign every part.
        case unsigned
    }

    /// Tunables.
    public struct Options: Sendable {
        /// Part bodies signed or not.
        public var payloadSigning: PayloadSigning
        /// Retries of 5xx and SlowDown inside each call. The backend's default is none: an upload's requests are
        /// retried by the uploader's one policy (which waits out the path, counts the attempts and opens its
        /// circuit breaker), and a second loop under it would multiply the attempts. `S3ObjectClient`, which no
        /// uploader drives, retries by S3's guidance (`S3RetryPolicy()`).
        public var retry: S3RetryPolicy
        /// Time limits of every request.
        public var timeouts: HTTPTimeouts
        /// `max-parts` of each `ListParts` page (1-1000).
        public var listPartsPageSize: Int

        /// Options; by default signed payloads, each request sent once, the default timeouts, 1000 parts per page.
        public init(
            payloadSigning: PayloadSigning = .signed, retry: S3RetryPolicy = S3RetryPolicy(maximumAttempts: 1),
            timeouts: HTTPTimeouts = HTTPTimeouts(), listPartsPageSize: Int = 1000
        ) {
            self.payloadSigning = payloadSigning
            self.retry = retry
            self.timeouts = timeouts
            self.listPartsPageSize = min(max(listPartsPageSize, 1), 1000)
        }
    }

    /// The object written.
    public let destination: S3Destination
    /// The service.
    public let endpoint: S3Endpoint
    /// The implementation behind the endpoint.
    public let flavor: S3Flavor
    /// Tunables.
    public let options: Options
    public var capabilities: BackendCapabilities { flavor.capabilities }
    /// Parts of a growing file in parallel (each part stands alone until the completion lists them).
    public var features: BackendFeatures { BackendFeatures(parallelFollow: true) }

    private let sender: S3SignedSender

    /// A backend that sends through `client`.
    public convenience init(
        destination: S3Destination, endpoint: S3Endpoint, flavor: S3Flavor = .aws, credentials: S3Credentials,
        client: HTTPClient, options: Options = Options()
    ) throws(TransportError) {
        try self.init(
            destination: destination, endpoint: endpoint, flavor: flavor, credentials: credentials, options: options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in try await client.send(request) })
    }

    /// A backend for a destination as a user writes it: `s3://bucket/key`, an optional endpoint URL (MinIO, Ceph,
    /// R2 or a test server; path-style), credentials and region from `chain` (region `us-east-1` when none is
    /// configured). The flavor is the one given, else the endpoint's (`S3Flavor.detect`: AWS without one, unknown
    /// for a custom host). Without an endpoint the flavor must be `.aws`.
    public convenience init(
        url: String, endpoint: String? = nil, flavor: S3Flavor? = nil,
        chain: S3CredentialChain = S3CredentialChain(), client: HTTPClient, options: Options = Options()
    ) throws(TransportError) {
        let destination = try S3Destination(parsing: url)
        let region = try chain.region() ?? "us-east-1"
        let resolved: S3Endpoint
        if let endpoint {
            resolved = try S3Endpoint(url: endpoint, region: region)
        } else {
            guard flavor == nil || flavor == .aws else {
                throw TransportError(.invalidArgument, "an S3 destination outside AWS needs an endpoint URL")
            }
            resolved = S3Endpoint.aws(region: region)
        }
        try self.init(
            destination: destination, endpoint: resolved,
            flavor: flavor ?? S3Flavor.detect(endpoint: endpoint == nil ? nil : resolved),
            credentials: chain.credentials(), client: client, options: options)
    }

    /// A backend with every dependency given: `clock` for the signatures' timestamps, `sleep` returning
    /// false when cancelled, `random` uniform in [0, 1) (back-off jitter).
    init(
        destination: S3Destination, endpoint: S3Endpoint, flavor: S3Flavor, credentials: S3Credentials,
        options: Options, transport: @escaping Transport,
        clock: any AetherClock = SystemClock(),
        sleep: @escaping @Sendable (Duration) async -> Bool = S3SignedSender.taskSleep,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) throws(TransportError) {
        try endpoint.validate(destination)
        self.destination = destination
        self.endpoint = endpoint
        self.flavor = flavor
        self.options = options
        self.sender = S3SignedSender(
            signer: S3SigV4Signer(credentials: credentials, region: endpoint.region), transport: transport,
            clock: clock, retry: options.retry, timeouts: options.timeouts, sleep: sleep, random: random)
    }

    /// The object's URL, which is every `RemoteUpload.location` of this backend.
    public var objectURL: String { endpoint.url(for: destination, query: []) }

    // MARK: UploadBackend

    public func create(_ description: UploadDescription) async throws(TransportError) -> RemoteUpload {
        let layout = description.layout
        guard description.size == layout.objectSize, description.size >= 0,
            description.size <= capabilities.maximumObjectSize
        else {
            throw TransportError(.invalidArgument, "the description's size does not match its layout or S3's limit")
        }
        guard layout.partCount <= capabilities.maximumParts, layout.partSize <= capabilities.maximumPartSize,
            layout.partCount == 1 || layout.partSize >= capabilities.minimumPartSize
        else {
            throw TransportError(
                .invalidArgument,
                "a layout of \(layout.partCount) parts of \(layout.partSize) bytes is outside S3's part limits")
        }
        // A growing file (`sizeDeferred`) always goes multipart: its size, and so its part count, is unknown.
        if layout.partCount == 1, !description.sizeDeferred {
            return RemoteUpload(
                location: objectURL, uploadID: nil, size: description.size, partSize: layout.partSize,
                contentType: description.contentType,
                metadata: description.metadata.isEmpty ? nil : description.metadata)
        }
        var headers = try Self.objectHeaders(contentType: description.contentType, metadata: description.metadata)
        if flavor.sendsCRC32C { headers.add("x-amz-checksum-algorithm", "CRC32C") }
        let response = try await perform(
            "CreateMultipartUpload", method: "POST", query: [("uploads", "")], headers: headers, body: [])
        let document = try S3XMLElement.parse(response.body)
        guard document.name == "InitiateMultipartUploadResult", let uploadID = document.text("UploadId"),
            !uploadID.isEmpty, uploadID.utf8.count <= 1024, uploadID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw TransportError(.protocolViolation, "S3 CreateMultipartUpload answered without a usable UploadId")
        }
        var upload = RemoteUpload(
            location: objectURL, uploadID: uploadID, size: description.size, partSize: layout.partSize)
        if description.sizeDeferred { upload.sizeDeferred = true }
        return upload
    }

    public func progress(of upload: RemoteUpload) async throws(TransportError) -> RemoteProgress {
        try check(upload)
        // A single PutObject is all or nothing: there is nothing to resume, the part is sent again.
        guard let uploadID = upload.uploadID else { return .parts([]) }
        var parts: [PartReceipt] = []
        var seen = Set<Int>()
        var marker: Int?
        let partCount = Self.partCount(upload)
        for _ in 0...partCount {
            var query: [(name: String, value: String)] = [
                ("max-parts", String(options.listPartsPageSize)), ("uploadId", uploadID),
            ]
            if let marker { query.append(("part-number-marker", String(marker))) }
            let response: HTTPResponse
            do {
                response = try await perform("ListParts", method: "GET", query: query, headers: [:], body: [])
            } catch  where error.code == .gone {
                return .gone
            }
            let document = try S3XMLElement.parse(response.body)
            // `ListPartsResult` is S3's root; moto 5.2 answers `ListPartsResponse` (botocore takes both).
            guard document.name == "ListPartsResult" || document.name == "ListPartsResponse" else {
                throw TransportError(.protocolViolation, "S3 ListParts answered with <\(document.name.prefix(64))>")
            }
            for element in document.children("Part") {
                guard let number = element.text("PartNumber").flatMap({ Int($0) }), number >= 1, number <= partCount,
                    let size = element.text("Size").flatMap({ Int64($0) }), size >= 0,
                    let entityTag = element.text("ETag"), !entityTag.isEmpty
                else { throw TransportError(.protocolViolation, "S3 ListParts listed a part outside the upload") }
                guard seen.insert(number).inserted else {
                    throw TransportError(.protocolViolation, "S3 ListParts listed part \(number) twice")
                }
                let checksum = try element.text("ChecksumCRC32C").map { (text) throws(TransportError) in
                    try Self.decodeCRC32C(text)
                }
                parts.append(
                    PartReceipt(index: number - 1, length: size, entityTag: entityTag, checksumCRC32C: checksum))
            }
            guard document.text("IsTruncated") == "true" else {
                return .parts(parts.sorted { $0.index < $1.index })
            }
            guard let next = document.text("NextPartNumberMarker").flatMap({ Int($0) }), next > (marker ?? 0) else {
                throw TransportError(.protocolViolation, "S3 ListParts is truncated but its marker does not advance")
            }
            marker = next
        }
        throw TransportError(.protocolViolation, "S3 ListParts returned more pages than the upload has parts")
    }

    public func send(_ part: UploadPart, to upload: RemoteUpload) async throws(TransportError) -> PartReceipt {
        try check(upload)
        let partCount = Self.partCount(upload)
        let start = Int64(part.index) * upload.partSize
        guard part.index >= 0, part.index < partCount, part.offset == start,
            part.length == min(upload.partSize, upload.size - start), part.body.length == part.length
        else {
            throw TransportError(
                .invalidArgument, "part \(part.index) of \(part.length) bytes does not fit the upload's layout")
        }
        var headers = HTTPHeaders()
        let crc = flavor.sendsCRC32C ? Self.encodeCRC32C(part.crc32c) : nil
        if let crc { headers.add("x-amz-checksum-crc32c", crc) }
        // Where no server check is known, the client checks the ETag against the MD5 (a streamed body's bytes are
        // not at hand: that part goes unchecked by the client, and its receipt says so).
        let md5 = flavor == .unknown ? Self.md5(of: part.body) : nil
        if let md5 { headers.add("Content-MD5", Data(md5).base64EncodedString()) }
        let operation: String
        var query: [(name: String, value: String)] = []
        if let uploadID = upload.uploadID {
            operation = "UploadPart \(part.index + 1)"
            query = [("partNumber", String(part.index + 1)), ("uploadId", uploadID)]
        } else {
            operation = "PutObject"
            for field in try Self.objectHeaders(contentType: upload.contentType, metadata: upload.metadata ?? [:]) {
                headers.add(field.name, field.value)
            }
        }
        let signed = options.payloadSigning == .signed || !flavor.serverPartChecks.contains(.serverCRC32C)
        let payload: S3SigV4Signer.Payload = signed ? .sha256(part.sha256) : .unsigned
        let response = try await perform(
            operation, method: "PUT", query: query, headers: headers, body: part.body, payload: payload,
            replayable: Self.isReplayable(part.body))
        guard let entityTag = response.headers["ETag"], !entityTag.isEmpty else {
            throw TransportError(.protocolViolation, "S3 \(operation) answered without an ETag")
        }
        var checks: Set<PartCheck> = []
        if signed, flavor.serverPartChecks.contains(.serverSHA256) { checks.insert(.serverSHA256) }
        if let crc {
            let echoed = response.headers["x-amz-checksum-crc32c"]
            if let echoed, echoed != crc {
                throw TransportError(
                    .receiptMismatch, "S3 \(operation) recorded CRC32C \(echoed.prefix(16)) but \(crc) was sent")
            }
            if flavor.serverPartChecks.contains(.serverCRC32C) || echoed == crc { checks.insert(.serverCRC32C) }
        }
        if let md5, let stored = Self.md5Hex(entityTag: entityTag) {
            let sent = Hex.encode(md5)
            guard stored == sent else {
                throw TransportError(
                    .receiptMismatch,
                    "S3 \(operation) answered ETag \(entityTag.prefix(40)), the MD5 of the bytes sent is \(sent)")
            }
            checks.insert(.clientETagMD5)
        }
        // A CRC32C the server did not check is not the server's record of the part.
        let recorded = checks.contains(.serverCRC32C) ? part.crc32c : nil
        return PartReceipt(
            index: part.index, length: part.length, entityTag: entityTag, checksumCRC32C: recorded, checks: checks)
    }

    /// The MD5 of a body held in memory or in chunks; nil for a stream.
    static func md5(of body: HTTPRequestBody) -> [UInt8]? {
        var hasher = MD5()
        switch body.storage {
        case .none: break
        case .pieces(let pieces, _):
            for piece in pieces {
                switch piece {
                case .bytes(let bytes): hasher.update(bytes)
                case .chunk(let chunk): hasher.update(chunk)
                }
            }
        case .stream: return nil
        }
        return hasher.finalize()
    }

    /// The lower-case hex MD5 an ETag holds (`"<32 hex>"`), nil for another form (a multipart `-N` ETag, an
    /// encrypted object's).
    static func md5Hex(entityTag: String) -> String? {
        var text = Substring(entityTag)
        if text.hasPrefix("W/") { return nil }
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
        guard text.utf8.count == 32, (try? Hex.decode(text)) != nil else { return nil }
        return text.lowercased()
    }

    public func complete(_ upload: RemoteUpload, summary: CompletionSummary) async throws(TransportError)
        -> UploadReceipt
    {
        try check(upload)
        let partCount = Self.partCount(upload)
        let parts = summary.parts.sorted { $0.index < $1.index }
        guard parts.count == partCount, parts.enumerated().allSatisfy({ $0.offset == $0.element.index }),
            parts.allSatisfy({ $0.entityTag != nil }),
            parts.reduce(Int64(0), { $0 + $1.length }) == upload.size
        else {
            throw TransportError(
                .invalidArgument, "completion needs a receipt with an ETag for each of the \(partCount) parts")
        }
        guard let uploadID = upload.uploadID else {
            var receipt = UploadReceipt(location: upload.location, size: upload.size, entityTag: parts[0].entityTag)
            receipt.checks = UploadCheck.tally(parts)
            return receipt
        }
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts {
            xml += "<Part><PartNumber>\(part.index + 1)</PartNumber><ETag>\(Self.escape(part.entityTag ?? ""))</ETag>"
            if let crc = part.checksumCRC32C { xml += "<ChecksumCRC32C>\(Self.encodeCRC32C(crc))</ChecksumCRC32C>" }
            xml += "</Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let response: HTTPResponse
        do {
            response = try await completeRequest(uploadID: uploadID, xml: xml)
        } catch  where error.code == .remoteRejected && error.message.contains("InvalidPart") {
            throw await diagnoseInvalidPart(error, upload: upload, parts: parts)
        }
        let document = try? S3XMLElement.parse(response.body)
        var checks = UploadCheck.tally(parts)
        if let reported = document?.text("ChecksumCRC32C") {
            if try Self.checkObjectCRC32C(reported, type: document?.text("ChecksumType"), parts: parts) {
                checks.append(
                    UploadCheck(
                        name: "object-crc32c", party: .client, parts: parts.count, of: parts.count,
                        summary: "the client compared the object's CRC32C the server reported with the parts'"))
            }
        }
        // Ceph answers an empty <ETag></ETag>: the object's ETag is then asked for.
        var entityTag = document?.text("ETag").flatMap { $0.isEmpty ? nil : $0 }
        if !flavor.serverPartChecks.contains(.serverCRC32C) {
            if entityTag == nil { entityTag = try await headEntityTag() }
            if let entityTag, try Self.checkMultipartETag(entityTag, parts: parts) {
                checks.append(
                    UploadCheck(
                        name: "object-etag", party: .client, parts: parts.count, of: parts.count,
                        summary: "the client compared the object's ETag with the MD5 of the parts' ETags, in order"))
            }
        }
        var receipt = UploadReceipt(location: upload.location, size: upload.size, entityTag: entityTag)
        receipt.checks = checks
        return receipt
    }

    /// `CompleteMultipartUpload` with `xml`.
    private func completeRequest(uploadID: String, xml: String) async throws(TransportError) -> HTTPResponse {
        try await perform(
            "CompleteMultipartUpload", method: "POST", query: [("uploadId", uploadID)],
            headers: ["Content-Type": "application/xml"], body: Array(xml.utf8)
        ) { (response) throws(TransportError) in
            // S3 may answer 200 and then report the failure in the body (it has already sent the status while
            // it assembled the parts).
            let document = try S3ErrorMapping.successDocument(response, operation: "CompleteMultipartUpload")
            guard document.name == "CompleteMultipartUploadResult" else {
                throw TransportError(
                    .protocolViolation, "S3 CompleteMultipartUpload answered with <\(document.name.prefix(64))>")
            }
        }
    }

    /// `HeadObject`'s ETag of the object, nil when it answers none.
    private func headEntityTag() async throws(TransportError) -> String? {
        let response = try await perform("HeadObject", method: "HEAD", query: [], headers: [:], body: [])
        return response.headers["ETag"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// An `InvalidPart` completion (a part not stored, or stored with another ETag than the receipt's; Ceph also
    /// refuses a list that leaves out a stored part) named precisely from `ListParts`: which part differs.
    private func diagnoseInvalidPart(_ error: TransportError, upload: RemoteUpload, parts: [PartReceipt]) async
        -> TransportError
    {
        guard case .parts(let stored)? = try? await progress(of: upload) else { return error }
        let held = Dictionary(stored.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        for part in parts {
            guard let listed = held[part.index] else {
                return TransportError(
                    .remoteRejected, error.message + "; part \(part.index + 1) is not stored (ListParts)")
            }
            if listed.entityTag != part.entityTag || listed.length != part.length {
                return TransportError(
                    .remoteRejected,
                    error.message + "; part \(part.index + 1) is stored with ETag \(listed.entityTag?.prefix(40) ?? "")"
                        + " and \(listed.length) bytes, the receipt has \(part.entityTag?.prefix(40) ?? "")")
            }
        }
        let extra = stored.map(\.index).filter { $0 >= parts.count }
        guard let first = extra.first else { return error }
        return TransportError(.remoteRejected, error.message + "; part \(first + 1) is stored but not in the list")
    }

    /// Compares a multipart object's ETag (`hex(MD5 of the parts' binary MD5s)-N`, as AWS, MinIO and Ceph form it)
    /// with the one the parts' ETags give; true when compared, false when either is in another form (an encrypted
    /// object's, a single PutObject's). A mismatch is `.receiptMismatch`: the object is not the parts named.
    static func checkMultipartETag(_ entityTag: String, parts: [PartReceipt]) throws(TransportError) -> Bool {
        var text = Substring(entityTag)
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
        let pieces = text.split(separator: "-")
        guard pieces.count == 2, let count = Int(pieces[1]), pieces[0].utf8.count == 32,
            (try? Hex.decode(pieces[0])) != nil
        else { return false }
        var joined: [UInt8] = []
        for part in parts {
            guard let hex = part.entityTag.flatMap(md5Hex(entityTag:)), let bytes = try? Hex.decode(hex) else {
                return false
            }
            joined += bytes
        }
        let expected = Hex.encode(MD5.hash(joined)) + "-\(parts.count)"
        guard pieces[0].lowercased() + "-\(count)" == expected else {
            throw TransportError(
                .receiptMismatch,
                "S3 reports the object's ETag \(entityTag.prefix(48)), the parts' ETags give \(expected)")
        }
        return true
    }

    /// Compares the object CRC32C a `CompleteMultipartUploadResult` reports with the one the parts' CRC32Cs give:
    /// `COMPOSITE` (`base64(CRC32C of the parts' big-endian CRC32Cs)-N`, S3's default for multipart) or
    /// `FULL_OBJECT` (the CRC32C of the whole object, combined from the parts'). Parts without a CRC32C give
    /// nothing to compare (false). Another value is `.receiptMismatch`.
    @discardableResult
    static func checkObjectCRC32C(_ reported: String, type: String?, parts: [PartReceipt]) throws(TransportError)
        -> Bool
    {
        let crcs = parts.compactMap(\.checksumCRC32C)
        guard crcs.count == parts.count, !parts.isEmpty else { return false }
        let expected: String
        if type == "FULL_OBJECT" || (type == nil && !reported.contains("-")) {
            var whole = crcs[0]
            for (crc, part) in zip(crcs.dropFirst(), parts.dropFirst()) {
                whole = CRC32C.combine(whole, crc, lengthOfB: Int(part.length))
            }
            expected = encodeCRC32C(whole)
        } else {
            var joined: [UInt8] = []
            for crc in crcs {
                joined += [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
            }
            expected = encodeCRC32C(CRC32C.checksum(joined)) + "-\(parts.count)"
        }
        guard reported == expected else {
            throw TransportError(
                .receiptMismatch,
                "S3 CompleteMultipartUpload reports the object's CRC32C \(reported.prefix(24)), the parts sent give "
                    + "\(expected)")
        }
        return true
    }

    public func abort(_ upload: RemoteUpload) async throws(TransportError) {
        try check(upload)
        guard let uploadID = upload.uploadID else { return }
        do {
            _ = try await perform(
                "AbortMultipartUpload", method: "DELETE", query: [("uploadId", uploadID)], headers: [:], body: [])
        } catch  where error.code == .gone {
            return  // already aborted, completed or expired: nothing is held
        }
    }

    // MARK: Requests

    /// Signs and sends one request, retrying per S3's guidance while the body can be sent again. `validate` runs
    /// on a 2xx response and may throw (a retryable code is retried like a 5xx).
    private func perform(
        _ operation: String, method: String, query: [(name: String, value: String)], headers: HTTPHeaders,
        body: [UInt8], validate: (HTTPResponse) throws(TransportError) -> Void = { _ in }
    ) async throws(TransportError) -> HTTPResponse {
        try await perform(
            operation, method: method, query: query, headers: headers, body: body.isEmpty ? .empty : .bytes(body),
            payload: .sha256(SHA256.hash(body)), replayable: true, validate: validate)
    }

    private func perform(
        _ operation: String, method: String, query: [(name: String, value: String)], headers: HTTPHeaders,
        body: HTTPRequestBody, payload: S3SigV4Signer.Payload, replayable: Bool,
        validate: (HTTPResponse) throws(TransportError) -> Void = { _ in }
    ) async throws(TransportError) -> HTTPResponse {
        try await sender.perform(
            S3SignedSender.Request(
                operation: operation, method: method, host: endpoint.authority(bucket: destination.bucket),
                path: endpoint.path(of: destination), url: endpoint.url(for: destination, query: query), query: query,
                headers: headers, body: body, payload: payload, replayable: replayable),
            validate: validate)
    }

    // MARK: Helpers

    private func check(_ upload: RemoteUpload) throws(TransportError) {
        guard upload.location == objectURL, upload.size >= 0, upload.partSize > 0 else {
            throw TransportError(.invalidArgument, "the upload belongs to another S3 object or its layout is invalid")
        }
    }

    static func partCount(_ upload: RemoteUpload) -> Int {
        upload.size == 0 ? 1 : Int((upload.size + upload.partSize - 1) / upload.partSize)
    }

    static func isReplayable(_ body: HTTPRequestBody) -> Bool {
        switch body.storage {
        case .none: true
        case .pieces(let pieces, _): pieces.allSatisfy { if case .bytes = $0 { true } else { false } }
        case .stream: false
        }
    }

    static func objectHeaders(contentType: String?, metadata: [String: String]) throws(TransportError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if let contentType { headers.add("Content-Type", contentType) }
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            guard HTTPHeaders.isSendable(name: "x-amz-meta-" + name, value: value),
                value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
            else {
                throw TransportError(
                    .invalidArgument, "metadata \(name.prefix(64)) is not a token or its value is not printable ASCII")
            }
            headers.add("x-amz-meta-" + name.lowercased(), value)
        }
        return headers
    }

    /// The `x-amz-checksum-crc32c` value of a CRC32C: its four big-endian bytes in base64.
    public static func checksumHeaderValue(_ crc32c: UInt32) -> String { encodeCRC32C(crc32c) }

    /// S3's form of a CRC32C: the four big-endian bytes in base64.
    static func encodeCRC32C(_ value: UInt32) -> String {
        Data([UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
            .base64EncodedString()
    }

    static func decodeCRC32C(_ text: String) throws(TransportError) -> UInt32 {
        guard let data = Data(base64Encoded: text), data.count == 4 else {
            throw TransportError(.protocolViolation, "S3 sent a CRC32C that is not 4 bytes in base64")
        }
        return data.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
