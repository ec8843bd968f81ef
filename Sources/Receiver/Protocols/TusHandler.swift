import AetherIO
import AetherTransport

/// tus 1.0 (`docs/PROTOCOL.md` section 5, server side) on the engine: core, creation, creation-with-upload,
/// creation-defer-length, termination, checksum (sha1, sha256, crc32), concatenation and expiration.
enum TusHandler {
    /// The version spoken.
    static let version = "1.0.0"
    /// The extensions offered.
    static let extensions =
        "creation,creation-with-upload,creation-defer-length,termination,checksum,concatenation,expiration"
    /// The checksum algorithms offered (`Tus-Checksum-Algorithm`).
    static let checksumAlgorithms = "sha1,sha256,crc32"
    /// The media type of tus appends.
    static let appendMediaType = "application/offset+octet-stream"

    static let resumable: [(name: String, value: String)] = [("Tus-Resumable", version)]

    /// The headers of an `OPTIONS` answer.
    static func discoveryFields(_ limits: ReceiverLimits) -> [(name: String, value: String)] {
        resumable + [
            ("Tus-Version", version), ("Tus-Extension", extensions),
            ("Tus-Max-Size", String(limits.maximumObjectSize)), ("Tus-Checksum-Algorithm", checksumAlgorithms),
        ]
    }

    /// A tus request must name version 1.0.0 (412 otherwise, with the versions spoken).
    static func checkVersion(_ request: HTTPServerRequest) -> HTTPServerResponse? {
        guard request.header("Tus-Resumable")?.trimmingSpacesAndTabs() == version else {
            var headers = resumable
            headers.append(("Tus-Version", version))
            return ProblemResponse.make(
                ReceiverError(.malformedRequest, "Tus-Resumable must be \(version)"), status: 412, headers: headers)
        }
        return nil
    }

    /// `POST /uploads` with `Tus-Resumable`.
    static func create(_ request: HTTPServerRequest, owner: ClientIdentity, context: ReceiverContext)
        -> HTTPRequestStart
    {
        if let refusal = checkVersion(request) { return .respond(refusal) }
        do throws(ReceiverError) {
            let length = try RequestFields.tusInteger(request, "Upload-Length")
            let deferred = request.header("Upload-Defer-Length")
            if let deferred, deferred != "1" {
                throw ReceiverError(.malformedRequest, "Upload-Defer-Length must be 1")
            }
            var metadata: [String: [UInt8]] = [:]
            if let field = request.header("Upload-Metadata") {
                do {
                    metadata = try TusMetadata.decode(field).mapValues { Array($0.utf8) }
                } catch {
                    throw ReceiverError(.malformedRequest, "Upload-Metadata is not key base64 pairs")
                }
            }
            var concatenation: NewUpload.Concatenation?
            if let field = request.header("Upload-Concat") {
                concatenation = try parseConcat(field)
            }
            let isFinal: Bool = if case .final = concatenation { true } else { false }
            if !isFinal {
                guard (length == nil) != (deferred == nil) else {
                    throw ReceiverError(.malformedRequest, "give exactly one of Upload-Length and Upload-Defer-Length")
                }
            }
            if let length, length > context.engine.limits.maximumObjectSize {
                throw ReceiverError(.tooLarge, "Upload-Length is over Tus-Max-Size")
            }
            let hasBody = RequestFields.hasBody(request)
            if hasBody {
                guard RequestFields.mediaType(request) == appendMediaType, !isFinal else {
                    throw ReceiverError(.unsupportedMediaType, "a creation with upload is \(appendMediaType)")
                }
            }
            let digest = try checksum(request)
            let record = try context.engine.create(
                NewUpload(uploadProtocol: .tus, size: length, metadata: metadata, concatenation: concatenation),
                owner: owner)
            context.metrics.uploadStarted("tus")
            let location = "/uploads/\(record.id)"
            let status = try context.engine.status(record.id, owner: owner)
            if isFinal, status.isComplete { context.metrics.uploadCompleted("tus") }
            guard hasBody else {
                var response = HTTPServerResponse(status: 201, headers: resumable)
                response.add("Location", location)
                if let expires = status.expiresAt { response.add("Upload-Expires", HTTPDate.format(expires)) }
                return .respond(response)
            }
            let sink = try context.engine.openAppend(
                record.id,
                request: AppendRequest(
                    offset: 0, length: RequestFields.contentLength(request), completes: nil, digest: digest),
                owner: owner)
            return .stream(
                AppendBodySink(sink: sink, context: context) { result in
                    switch result {
                    case .success(let appended):
                        if appended.completed { context.metrics.uploadCompleted("tus") }
                        var response = HTTPServerResponse(status: 201, headers: resumable)
                        response.add("Location", location)
                        response.add("Upload-Offset", String(appended.offset))
                        if let expires = status.expiresAt, !appended.completed {
                            response.add("Upload-Expires", HTTPDate.format(expires))
                        }
                        return response
                    case .failure(let error):
                        var headers = resumable
                        headers.append(("Location", location))
                        return problem(error, headers: headers)
                    }
                })
        } catch {
            return .respond(problem(error, headers: resumable))
        }
    }

    /// `HEAD /uploads/{id}` for a tus upload.
    static func head(_ status: UploadStatus) -> HTTPServerResponse {
        var response = HTTPServerResponse(status: 200, headers: resumable)
        response.add("Upload-Offset", String(status.offset))
        if let size = status.record.size {
            response.add("Upload-Length", String(size))
        } else {
            response.add("Upload-Defer-Length", "1")
        }
        if !status.record.metadata.isEmpty,
            let field = try? TusMetadata.encode(
                status.record.metadata.mapValues { String(decoding: $0, as: UTF8.self) })
        {
            response.add("Upload-Metadata", field)
        }
        switch status.record.concatenation {
        case .partial: response.add("Upload-Concat", "partial")
        case .final(let partials):
            response.add("Upload-Concat", "final;" + partials.map { "/uploads/\($0)" }.joined(separator: " "))
        case nil: break
        }
        if let expires = status.expiresAt, !status.isComplete {
            response.add("Upload-Expires", HTTPDate.format(expires))
        }
        response.add("Cache-Control", "no-store")
        return response
    }

    /// `PATCH /uploads/{id}`.
    static func append(
        _ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity, context: ReceiverContext
    ) -> HTTPRequestStart {
        if let refusal = checkVersion(request) { return .respond(refusal) }
        do throws(ReceiverError) {
            guard RequestFields.mediaType(request) == appendMediaType else {
                throw ReceiverError(.unsupportedMediaType, "a tus append is \(appendMediaType)")
            }
            guard let offset = try RequestFields.tusInteger(request, "Upload-Offset") else {
                throw ReceiverError(.malformedRequest, "Upload-Offset is missing")
            }
            let sink = try context.engine.openAppend(
                id,
                request: AppendRequest(
                    offset: offset, length: RequestFields.contentLength(request), completes: nil,
                    uploadLength: try RequestFields.tusInteger(request, "Upload-Length"), digest: try checksum(request)),
                owner: owner)
            let expires = try context.engine.status(id, owner: owner).expiresAt
            return .stream(
                AppendBodySink(sink: sink, context: context) { result in
                    switch result {
                    case .success(let appended):
                        if appended.completed { context.metrics.uploadCompleted("tus") }
                        var response = HTTPServerResponse(status: 204, headers: resumable)
                        response.add("Upload-Offset", String(appended.offset))
                        if let expires, !appended.completed {
                            response.add("Upload-Expires", HTTPDate.format(expires))
                        }
                        return response
                    case .failure(let error):
                        return problem(error, headers: resumable)
                    }
                })
        } catch {
            return .respond(problem(error, headers: resumable))
        }
    }

    /// `Upload-Checksum: ALGORITHM BASE64`; nil when absent.
    static func checksum(_ request: HTTPServerRequest) throws(ReceiverError) -> AppendRequest.Digest? {
        guard let field = request.header("Upload-Checksum") else { return nil }
        let parts = field.trimmingSpacesAndTabs().split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else {
            throw ReceiverError(.malformedRequest, "Upload-Checksum is not an algorithm and a base64 digest")
        }
        let algorithm: AppendRequest.Digest.Algorithm
        let size: Int
        switch parts[0].lowercased() {
        case "sha1": (algorithm, size) = (.sha1, 20)
        case "sha256", "sha-256": (algorithm, size) = (.sha256, 32)
        case "crc32": (algorithm, size) = (.crc32, 4)
        default:
            throw ReceiverError(.malformedRequest, "Upload-Checksum names an algorithm not in Tus-Checksum-Algorithm")
        }
        guard case .bytes(let bytes)? = StructuredField.item(":" + parts[1] + ":"), bytes.count == size else {
            throw ReceiverError(.malformedRequest, "Upload-Checksum's digest is not base64 of the right length")
        }
        return AppendRequest.Digest(algorithm: algorithm, bytes: bytes)
    }

    /// `Upload-Concat: partial` or `final;URL URL ...` (absolute URLs or paths of this receiver's uploads).
    static func parseConcat(_ field: String) throws(ReceiverError) -> NewUpload.Concatenation {
        let text = field.trimmingSpacesAndTabs()
        if text == "partial" { return .partial }
        guard text.hasPrefix("final;") else {
            throw ReceiverError(.malformedRequest, "Upload-Concat is not partial or final;URLs")
        }
        var partials: [UploadID] = []
        for url in text.dropFirst(6).split(separator: " ", omittingEmptySubsequences: true) {
            var path = Substring(url)
            if let colon = path.firstIndex(of: ":"), path[colon...].hasPrefix("://") {
                let rest = path[path.index(colon, offsetBy: 3)...]
                guard let slash = rest.firstIndex(of: "/") else {
                    throw ReceiverError(.malformedRequest, "an Upload-Concat URL has no path")
                }
                path = rest[slash...]
            }
            guard case .upload(let id) = try? UploadRoute(path: String(path)) else {
                throw ReceiverError(.malformedRequest, "an Upload-Concat URL names no upload of this receiver")
            }
            partials.append(id)
        }
        guard !partials.isEmpty, partials.count <= 1000 else {
            throw ReceiverError(.malformedRequest, "Upload-Concat final names 1 to 1000 partial uploads")
        }
        return .final(partials)
    }

    /// A problem; a checksum mismatch is 460 (tus checksum extension), a conflict carries `Upload-Offset`.
    static func problem(_ error: ReceiverError, headers: [(name: String, value: String)]) -> HTTPServerResponse {
        var headers = headers
        if error.code == .offsetMismatch, let offset = error.offset {
            headers.append(("Upload-Offset", String(offset)))
        }
        return ProblemResponse.make(error, status: error.code == .digestMismatch ? 460 : nil, headers: headers)
    }
}
