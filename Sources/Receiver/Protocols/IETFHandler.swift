import AetherIO
import AetherTransport

/// IETF resumable upload (`docs/PROTOCOL.md` section 4) on the engine: interop version 6 (draft-05) and the
/// latest draft's version, chosen per request by `Upload-Draft-Interop-Version`. A 104 (Upload Resumption
/// Supported) cannot be sent: libmicrohttpd has no interim responses, so the `Location` arrives with the final
/// answer.
enum IETFHandler {
    /// An interop version the receiver speaks.
    enum Version: Int64, Sendable, CaseIterable {
        /// draft-ietf-httpbis-resumable-upload-05.
        case draft05 = 6
        /// The latest draft's version.
        case latest = 8
    }

    /// The request's version: its `Upload-Draft-Interop-Version`, the latest when absent; another is refused.
    static func version(_ request: HTTPServerRequest) throws(ReceiverError) -> Version {
        guard let number = try RequestFields.integer(request, "Upload-Draft-Interop-Version") else { return .latest }
        guard let version = Version(rawValue: number) else {
            throw ReceiverError(.malformedRequest, "Upload-Draft-Interop-Version \(number) is not 6 or 8")
        }
        return version
    }

    /// `Upload-Limit` for `version`: `max-size` and the lifetime (`expires` in draft-05, `max-age` after it).
    static func limitField(_ version: Version, limits: ReceiverLimits, secondsLeft: Int64? = nil) -> String {
        let lifetime = secondsLeft ?? limits.expirySeconds
        return "max-size=\(min(limits.maximumObjectSize, AetherWire.maximumInteger)), "
            + (version == .draft05 ? "expires=\(lifetime)" : "max-age=\(lifetime)")
    }

    static func baseHeaders(_ version: Version) -> [(name: String, value: String)] {
        [("Upload-Draft-Interop-Version", String(version.rawValue))]
    }

    /// `POST /uploads` with the IETF headers: creation, with or without the first bytes.
    static func create(_ request: HTTPServerRequest, owner: ClientIdentity, context: ReceiverContext)
        -> HTTPRequestStart
    {
        let headers = (try? version(request)).map(baseHeaders) ?? []
        do throws(ReceiverError) {
            let version = try version(request)
            guard let complete = try RequestFields.boolean(request, "Upload-Complete") else {
                throw ReceiverError(.malformedRequest, "Upload-Complete is missing")
            }
            let length = try RequestFields.integer(request, "Upload-Length")
            let representation = try RequestFields.sha256Digest(request, "Repr-Digest")
            let contentDigest = try RequestFields.sha256Digest(request, "Content-Digest")
            let bodyLength = RequestFields.contentLength(request)
            if let length, let bodyLength, bodyLength > length {
                throw ReceiverError(.tooLarge, "the body is longer than Upload-Length")
            }
            let record = try context.engine.create(
                NewUpload(
                    uploadProtocol: .ietf, size: complete ? (length ?? bodyLength) : length,
                    expectedSHA256: representation),
                owner: owner)
            context.metrics.uploadStarted("ietf")
            let location = "/uploads/\(record.id)"
            guard RequestFields.hasBody(request) || complete else {
                return .respond(
                    answer(201, version: version, offset: 0, complete: false, location: location, context: context))
            }
            let sink = try context.engine.openAppend(
                record.id,
                request: AppendRequest(
                    offset: 0, length: bodyLength, completes: complete, uploadLength: nil,
                    digest: contentDigest.map { .init(algorithm: .sha256, bytes: $0.bytes) },
                    objectSHA256: complete ? representation : nil),
                owner: owner)
            return .stream(
                AppendBodySink(sink: sink, context: context) { result in
                    switch result {
                    case .success(let appended):
                        if appended.completed { context.metrics.uploadCompleted("ietf") }
                        var response = answer(
                            201, version: version, offset: appended.offset, complete: appended.completed,
                            location: location, context: context)
                        if let receipt = appended.receipt {
                            response.add(
                                "Repr-Digest", "sha-256=" + StructuredField.serialize(receipt.fileSHA256.bytes))
                        }
                        return response
                    case .failure(let error):
                        var headers = baseHeaders(version)
                        headers.append(("Location", location))
                        return ProblemResponse.make(error, headers: headers)
                    }
                })
        } catch {
            return .respond(ProblemResponse.make(error, headers: headers))
        }
    }

    /// `HEAD /uploads/{id}`: offset retrieval.
    static func head(_ request: HTTPServerRequest, status: UploadStatus, context: ReceiverContext)
        -> HTTPServerResponse
    {
        let version = (try? version(request)) ?? .latest
        var response = HTTPServerResponse(status: 204, headers: baseHeaders(version))
        response.add("Upload-Offset", String(status.offset))
        response.add("Upload-Complete", status.isComplete ? "?1" : "?0")
        if let size = status.record.size { response.add("Upload-Length", String(size)) }
        response.add(
            "Upload-Limit",
            limitField(version, limits: context.engine.limits, secondsLeft: context.secondsLeft(status.expiresAt)))
        response.add("Cache-Control", "no-store")
        return response
    }

    /// `PATCH /uploads/{id}`: an append, completing the upload with `Upload-Complete: ?1`.
    static func append(
        _ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity, context: ReceiverContext
    ) -> HTTPRequestStart {
        let headers = (try? version(request)).map(baseHeaders) ?? []
        do throws(ReceiverError) {
            let version = try version(request)
            guard RequestFields.mediaType(request) == "application/partial-upload" else {
                throw ReceiverError(.unsupportedMediaType, "an append is application/partial-upload")
            }
            guard let offset = try RequestFields.integer(request, "Upload-Offset") else {
                throw ReceiverError(.malformedRequest, "Upload-Offset is missing")
            }
            guard let complete = try RequestFields.boolean(request, "Upload-Complete") else {
                throw ReceiverError(.malformedRequest, "Upload-Complete is missing")
            }
            let contentDigest = try RequestFields.sha256Digest(request, "Content-Digest")
            let representation = try RequestFields.sha256Digest(request, "Repr-Digest")
            let sink = try context.engine.openAppend(
                id,
                request: AppendRequest(
                    offset: offset, length: RequestFields.contentLength(request), completes: complete,
                    uploadLength: try RequestFields.integer(request, "Upload-Length"),
                    digest: contentDigest.map { .init(algorithm: .sha256, bytes: $0.bytes) },
                    objectSHA256: representation),
                owner: owner)
            return .stream(
                AppendBodySink(sink: sink, context: context) { result in
                    switch result {
                    case .success(let appended):
                        if appended.completed { context.metrics.uploadCompleted("ietf") }
                        var response = answer(
                            appended.completed ? 200 : 204, version: version, offset: appended.offset,
                            complete: appended.completed, location: nil, context: context)
                        if let receipt = appended.receipt {
                            response.add(
                                "Repr-Digest", "sha-256=" + StructuredField.serialize(receipt.fileSHA256.bytes))
                        }
                        return response
                    case .failure(let error):
                        if error.code == .digestMismatch, representation != nil, complete {
                            context.metrics.uploadFailed("ietf")
                        }
                        return conflictAware(error, headers: baseHeaders(version))
                    }
                })
        } catch {
            return .respond(conflictAware(error, headers: headers))
        }
    }

    /// A problem; a 409 carries the stored `Upload-Offset` (latest 4.4.1).
    static func conflictAware(_ error: ReceiverError, headers: [(name: String, value: String)])
        -> HTTPServerResponse
    {
        var headers = headers
        if error.code == .offsetMismatch, let offset = error.offset {
            headers.append(("Upload-Offset", String(offset)))
        }
        return ProblemResponse.make(error, headers: headers)
    }

    static func answer(
        _ status: Int, version: Version, offset: Int64, complete: Bool, location: String?, context: ReceiverContext
    ) -> HTTPServerResponse {
        var response = HTTPServerResponse(status: status, headers: baseHeaders(version))
        if let location { response.add("Location", location) }
        response.add("Upload-Complete", complete ? "?1" : "?0")
        response.add("Upload-Offset", String(offset))
        response.add("Upload-Limit", limitField(version, limits: context.engine.limits))
        return response
    }
}
