import AetherIO

/// Object operations on one S3 bucket, by key: what a store that keeps many objects needs (the receiver's
/// `S3BlobStore`), beside `S3Backend`, which writes one object for the Uploader.
///
/// Every request is signed with SigV4 and sent through the HTTP client; 500, 502, 503 (`SlowDown`), 504, a closed
/// connection and a timeout are retried with the same jittered back-off as `S3Backend` (every body here is a
/// buffer, so every request can be sent again). Failures are `TransportError`s mapped from S3's `<Error>` codes:
/// `.gone` (`NoSuchKey`, `NoSuchBucket`, `NoSuchUpload`), `.accessDenied`, `.throttled`, `.serverFailed`,
/// `.connectionRefused` (the endpoint is not listening). Messages never carry a credential or a signature.
public final class S3ObjectClient: Sendable {
    /// How a request reaches the server.
    package typealias Transport = S3Backend.Transport

    /// One object of a listing.
    package struct Listed: Sendable, Hashable {
        /// The object's key.
        package let key: String
        /// Its length in bytes.
        package let size: Int64
        /// `LastModified` as S3 wrote it (ISO 8601, UTC): texts of one server compare in time order.
        package let lastModified: String
    }

    /// A part of a multipart upload, as `CompleteMultipartUpload` names it.
    package struct CompletedPart: Sendable, Hashable {
        /// 1...10,000.
        package let number: Int
        /// The ETag S3 answered for the part.
        package let entityTag: String

        /// A part.
        package init(number: Int, entityTag: String) {
            self.number = number
            self.entityTag = entityTag
        }
    }

    /// The bucket.
    public let bucket: String
    /// The service.
    public let endpoint: S3Endpoint
    /// Retries and time limits.
    public let options: S3Backend.Options

    private let sender: S3SignedSender

    /// A client of `bucket` at `endpoint` that sends through `client`; by default it retries 5xx and SlowDown by
    /// S3's guidance (`S3RetryPolicy()`).
    public convenience init(
        bucket: String, endpoint: S3Endpoint, credentials: S3Credentials, client: HTTPClient,
        options: S3Backend.Options = S3Backend.Options(retry: S3RetryPolicy())
    ) throws(TransportError) {
        try self.init(
            bucket: bucket, endpoint: endpoint, credentials: credentials, options: options,
            transport: { (request) async throws(TransportError) -> HTTPResponse in try await client.send(request) })
    }

    /// A client with its transport given (tests script the server).
    init(
        bucket: String, endpoint: S3Endpoint, credentials: S3Credentials, options: S3Backend.Options,
        transport: @escaping Transport, clock: any AetherClock = SystemClock()
    ) throws(TransportError) {
        // Validates the bucket name (and, for virtual-host addressing over TLS, that it has no dots).
        try endpoint.validate(S3Destination(bucket: bucket, key: "probe"))
        self.bucket = bucket
        self.endpoint = endpoint
        self.options = options
        self.sender = S3SignedSender(
            signer: S3SigV4Signer(credentials: credentials, region: endpoint.region), transport: transport,
            clock: clock, retry: options.retry, timeouts: options.timeouts, sleep: S3SignedSender.taskSleep,
            random: { Double.random(in: 0..<1) })
    }

    // MARK: Objects

    /// `PutObject`: stores `bytes` as `key` (visible once this returns); returns the ETag.
    @discardableResult
    package func putObject(_ key: String, bytes: [UInt8]) async throws(TransportError) -> String {
        let response = try await perform("PutObject", method: "PUT", key: key, body: bytes)
        return response.headers["ETag"] ?? ""
    }

    /// `GetObject` of `range` of `key` (the whole object when nil). A range past the end is cut to the object.
    package func getObject(_ key: String, range: Range<Int64>? = nil) async throws(TransportError) -> [UInt8] {
        var headers = HTTPHeaders()
        var limit = 1 << 30
        if let range {
            guard range.lowerBound >= 0, !range.isEmpty else {
                throw TransportError(.invalidArgument, "a ranged GetObject needs a non-empty range from 0 up")
            }
            headers.add("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
            limit = Int(clamping: range.count) + 4096
        }
        let response = try await perform(
            "GetObject", method: "GET", key: key, headers: headers, responseBodyLimit: limit)
        if let range, response.status == 200, Int64(response.body.count) > range.count {
            // A server that ignored Range sent the whole object: keep the asked part.
            let start = Int(clamping: min(range.lowerBound, Int64(response.body.count)))
            let end = Int(clamping: min(range.upperBound, Int64(response.body.count)))
            return Array(response.body[start..<end])
        }
        return response.body
    }

    /// `HeadObject`: the length of `key`, nil when it does not exist.
    package func headObject(_ key: String) async throws(TransportError) -> Int64? {
        do throws(TransportError) {
            let response = try await perform("HeadObject", method: "HEAD", key: key)
            guard let length = response.headers["Content-Length"].flatMap({ Int64($0) }), length >= 0 else {
                throw TransportError(.protocolViolation, "S3 HeadObject answered without a Content-Length")
            }
            return length
        } catch  where error.code == .gone {
            return nil
        }
    }

    /// `DeleteObject`; a missing key is not an error.
    package func deleteObject(_ key: String) async throws(TransportError) {
        do throws(TransportError) {
            _ = try await perform("DeleteObject", method: "DELETE", key: key)
        } catch  where error.code == .gone {
            if error.message.contains("NoSuchBucket") { throw error }
        }
    }

    /// `CopyObject` (server side, up to 5 GiB): `source` of this bucket becomes also `target`.
    package func copyObject(from source: String, to target: String) async throws(TransportError) {
        var headers = HTTPHeaders()
        headers.add("x-amz-copy-source", try copySource(source))
        _ = try await perform("CopyObject", method: "PUT", key: target, headers: headers) {
            (response) throws(TransportError) in try Self.checkCopyResult(response, operation: "CopyObject")
        }
    }

    /// `ListObjectsV2` of every key under `prefix`, page after page.
    package func listObjects(prefix: String, pageSize: Int = 1000) async throws(TransportError) -> [Listed] {
        var listed: [Listed] = []
        var token: String?
        while true {
            var query: [(name: String, value: String)] = [
                ("list-type", "2"), ("max-keys", String(min(max(pageSize, 1), 1000))), ("prefix", prefix),
            ]
            if let token { query.insert(("continuation-token", token), at: 0) }
            let response = try await perform("ListObjectsV2", method: "GET", key: nil, query: query)
            let document = try S3XMLElement.parse(response.body)
            guard document.name == "ListBucketResult" else {
                throw TransportError(.protocolViolation, "S3 ListObjectsV2 answered with <\(document.name.prefix(64))>")
            }
            for element in document.children("Contents") {
                guard let key = element.text("Key"), key.hasPrefix(prefix),
                    let size = element.text("Size").flatMap({ Int64($0) }), size >= 0
                else { throw TransportError(.protocolViolation, "S3 ListObjectsV2 listed an unusable object") }
                listed.append(Listed(key: key, size: size, lastModified: element.text("LastModified") ?? ""))
            }
            guard document.text("IsTruncated") == "true" else { return listed }
            guard let next = document.text("NextContinuationToken"), !next.isEmpty, next != token else {
                throw TransportError(.protocolViolation, "S3 ListObjectsV2 is truncated without a new token")
            }
            token = next
        }
    }

    /// `CreateBucket` of this client's bucket (for tests and first runs against a fresh server); a bucket this
    /// account already owns is not an error.
    package func createBucket() async throws(TransportError) {
        do throws(TransportError) {
            _ = try await perform("CreateBucket", method: "PUT", key: nil)
        } catch  where error.message.contains("BucketAlreadyOwnedByYou") {
            return
        }
    }

    /// `HeadBucket`: throws `.gone` when the bucket does not exist, `.accessDenied` when it is not ours.
    package func headBucket() async throws(TransportError) {
        _ = try await perform("HeadBucket", method: "HEAD", key: nil)
    }

    // MARK: Multipart

    /// `CreateMultipartUpload` of `key`; returns the upload id.
    package func createMultipartUpload(_ key: String) async throws(TransportError) -> String {
        let response = try await perform("CreateMultipartUpload", method: "POST", key: key, query: [("uploads", "")])
        let document = try S3XMLElement.parse(response.body)
        guard document.name == "InitiateMultipartUploadResult", let uploadID = document.text("UploadId"),
            !uploadID.isEmpty, uploadID.utf8.count <= 1024, uploadID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw TransportError(.protocolViolation, "S3 CreateMultipartUpload answered without a usable UploadId") }
        return uploadID
    }

    /// `UploadPart` `number` of `bytes`; returns its ETag.
    package func uploadPart(_ key: String, uploadID: String, number: Int, bytes: [UInt8]) async throws(TransportError)
        -> String
    {
        let response = try await perform(
            "UploadPart \(number)", method: "PUT", key: key,
            query: [("partNumber", String(number)), ("uploadId", uploadID)], body: bytes)
        guard let entityTag = response.headers["ETag"], !entityTag.isEmpty else {
            throw TransportError(.protocolViolation, "S3 UploadPart \(number) answered without an ETag")
        }
        return entityTag
    }

    /// `UploadPartCopy` `number` from `range` of `source` (the whole object when nil,
    /// `x-amz-copy-source-range` otherwise); returns the part's ETag.
    package func uploadPartCopy(
        _ key: String, uploadID: String, number: Int, source: String, range: Range<Int64>? = nil
    ) async throws(TransportError) -> String {
        var headers = HTTPHeaders()
        headers.add("x-amz-copy-source", try copySource(source))
        if let range {
            guard range.lowerBound >= 0, !range.isEmpty else {
                throw TransportError(.invalidArgument, "UploadPartCopy needs a non-empty source range")
            }
            headers.add("x-amz-copy-source-range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
        }
        var entityTag: String?
        _ = try await perform(
            "UploadPartCopy \(number)", method: "PUT", key: key,
            query: [("partNumber", String(number)), ("uploadId", uploadID)], headers: headers
        ) { (response) throws(TransportError) in
            entityTag = try Self.checkCopyResult(response, operation: "UploadPartCopy \(number)")
        }
        guard let entityTag, !entityTag.isEmpty else {
            throw TransportError(.protocolViolation, "S3 UploadPartCopy \(number) answered without an ETag")
        }
        return entityTag
    }

    /// `CompleteMultipartUpload` with `parts` in order: the object appears whole, atomically.
    package func completeMultipartUpload(_ key: String, uploadID: String, parts: [CompletedPart])
        async throws(TransportError)
    {
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts {
            xml +=
                "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(S3Backend.escape(part.entityTag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/xml")
        _ = try await perform(
            "CompleteMultipartUpload", method: "POST", key: key, query: [("uploadId", uploadID)], headers: headers,
            body: Array(xml.utf8)
        ) { (response) throws(TransportError) in
            _ = try S3ErrorMapping.successDocument(response, operation: "CompleteMultipartUpload")
        }
    }

    /// `AbortMultipartUpload`; one already gone is not an error.
    package func abortMultipartUpload(_ key: String, uploadID: String) async throws(TransportError) {
        do throws(TransportError) {
            _ = try await perform("AbortMultipartUpload", method: "DELETE", key: key, query: [("uploadId", uploadID)])
        } catch  where error.code == .gone {
            return
        }
    }

    // MARK: Requests

    private func copySource(_ key: String) throws(TransportError) -> String {
        _ = try S3Destination(bucket: bucket, key: key)
        return S3SigV4Signer.encode("/\(bucket)/\(key)", keepSlash: true)
    }

    /// A copy answers 200 and may still fail (an `<Error>` body); returns the copy's ETag.
    @discardableResult
    private static func checkCopyResult(_ response: HTTPResponse, operation: String) throws(TransportError) -> String? {
        try S3ErrorMapping.successDocument(response, operation: operation).text("ETag")
    }

    /// Signs and sends one request to `key` (the bucket itself when nil), retrying transient failures per
    /// `options.retry`; `validate` runs on a 2xx response and may throw.
    private func perform(
        _ operation: String, method: String, key: String?, query: [(name: String, value: String)] = [],
        headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], responseBodyLimit: Int = 8 << 20,
        validate: (HTTPResponse) throws(TransportError) -> Void = { _ in }
    ) async throws(TransportError) -> HTTPResponse {
        let path: String
        let url: String
        if let key {
            let destination = try S3Destination(bucket: bucket, key: key)
            path = endpoint.path(of: destination)
            url = endpoint.url(for: destination, query: query)
        } else {
            path = endpoint.bucketPath(bucket)
            url = endpoint.url(bucket: bucket, path: path, query: query)
        }
        return try await sender.perform(
            S3SignedSender.Request(
                operation: operation, method: method, host: endpoint.authority(bucket: bucket), path: path, url: url,
                query: query, headers: headers, body: body.isEmpty ? .empty : .bytes(body),
                payload: .sha256(SHA256.hash(body)), responseBodyLimit: responseBodyLimit),
            validate: validate)
    }
}
