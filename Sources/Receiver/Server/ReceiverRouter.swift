public import AetherIO
import AetherTransport

/// Routes the receiver's requests (`docs/PROTOCOL.md` sections 1-7): authentication, the three protocols on one
/// port, `/healthz` and `/metrics`; logs one line per request.
public final class ReceiverRouter: HTTPRequestRouter {
    /// The client name of requests without tokens (loopback only).
    public static let loopbackClient = "loopback"

    let context: ReceiverContext
    private let tokens: BearerTokens?
    private let log: RequestLog
    private let connections: @Sendable () -> HTTPConnectionStatistics

    /// A router over `engine`. Without `tokens` only loopback clients are served.
    public init(
        engine: UploadEngine, tokens: BearerTokens?, metrics: ReceiverMetrics, log: RequestLog,
        clock: any AetherClock = SystemClock(),
        connections: @escaping @Sendable () -> HTTPConnectionStatistics = { HTTPConnectionStatistics() }
    ) {
        self.context = ReceiverContext(engine: engine, metrics: metrics, clock: clock)
        self.tokens = tokens
        self.log = log
        self.connections = connections
    }

    public func start(_ request: HTTPServerRequest) -> HTTPRequestStart {
        let start: HTTPRequestStart
        do throws(ReceiverError) {
            try RequestFields.checkFraming(request)
            start = route(request)
        } catch {
            // Answered at the headers with the body unread: libmicrohttpd then closes the connection.
            start = .respond(ProblemResponse.make(error))
        }
        guard case .respond(var response) = start else { return start }
        context.metrics.answered(response.status)
        // A HEAD answer has no content: clients that send HEAD do not wait for one.
        if request.method == "HEAD" { response.body = [] }
        return .respond(response)
    }

    public func ended(_ request: HTTPServerRequest, status: Int?, bytesReceived: Int64, nanoseconds: UInt64) {
        let id = (try? UploadRoute(path: request.path))?.uploadID?.rawValue
        log.request(
            RequestLog.Entry(
                method: request.method, route: request.path, status: status, bytes: bytesReceived,
                milliseconds: Double(nanoseconds) / 1e6, uploadID: id, client: owner(request)?.name))
    }

    private func route(_ original: HTTPServerRequest) -> HTTPRequestStart {
        var request = original
        // tus: X-HTTP-Method-Override on a POST stands for the named method.
        if original.method == "POST", let override = original.header("X-HTTP-Method-Override") {
            let method = override.trimmingSpacesAndTabs().uppercased()
            guard ["PATCH", "DELETE", "HEAD", "GET"].contains(method) else {
                return .respond(
                    ProblemResponse.make(ReceiverError(.malformedRequest, "X-HTTP-Method-Override names no method")))
            }
            request = HTTPServerRequest(
                method: method, path: original.path, headers: original.headers, clientAddress: original.clientAddress,
                isLoopback: original.isLoopback)
        }
        let route: UploadRoute
        do {
            route = try UploadRoute(path: request.path)
        } catch {
            return .respond(ProblemResponse.make(error))
        }
        switch (route, request.method) {
        case (.health, "GET"), (.health, "HEAD"):
            return .respond(health())
        case (.metrics, "GET"):
            guard request.isLoopback || owner(request) != nil else {
                return .respond(ProblemResponse.make(ReceiverError(.unauthorized, "a bearer token is required")))
            }
            var response = HTTPServerResponse(
                status: 200, body: Array(context.metrics.render(connections: connections()).utf8))
            response.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return .respond(response)
        case (.uploads, "OPTIONS"), (.upload, "OPTIONS"):
            return .respond(discovery(request))
        default:
            break
        }
        guard let owner = owner(request) else {
            let error =
                tokens == nil
                ? ReceiverError(.forbidden, "without a token file only loopback clients are served")
                : ReceiverError(.unauthorized, "a valid bearer token is required")
            return .respond(ProblemResponse.make(error))
        }
        let isTus = request.has("Tus-Resumable")
        switch (route, request.method) {
        case (.uploads, "POST"):
            if request.has(AetherWire.protocolField) {
                guard request.header(AetherWire.protocolField) == "1" else {
                    return .respond(
                        NativeHandler.problem(ReceiverError(.malformedRequest, "Aether-Protocol must be 1")))
                }
                return NativeHandler.create(request, owner: owner, context: context)
            }
            if isTus { return TusHandler.create(request, owner: owner, context: context) }
            if request.has("Upload-Draft-Interop-Version") || request.has("Upload-Complete") {
                return IETFHandler.create(request, owner: owner, context: context)
            }
            return .respond(
                ProblemResponse.make(
                    ReceiverError(
                        .unknownProtocol,
                        "POST /uploads carries none of Aether-Protocol, Tus-Resumable, Upload-Complete"
                    )))
        case (.upload(let id), "HEAD"):
            return .respond(head(request, id: id, owner: owner))
        case (.upload(let id), "GET"):
            return .respond(NativeHandler.status(id, owner: owner, context: context))
        case (.upload(let id), "PATCH"):
            if isTus { return TusHandler.append(request, id: id, owner: owner, context: context) }
            return IETFHandler.append(request, id: id, owner: owner, context: context)
        case (.upload(let id), "DELETE"):
            return .respond(cancel(request, id: id, owner: owner))
        case (.chunk(let id, let index), "PUT"):
            return NativeHandler.chunk(request, id: id, target: (index, 0, 0), owner: owner, context: context)
        case (.parity(let id, let group, let shard), "PUT"):
            return NativeHandler.chunk(request, id: id, target: (nil, group, shard), owner: owner, context: context)
        case (.challenges(let id), "POST"):
            return NativeHandler.challenge(request, id: id, owner: owner, context: context)
        case (.possession(let id), "POST"):
            return NativeHandler.possession(request, id: id, owner: owner, context: context)
        case (.complete(let id), "POST"):
            return NativeHandler.complete(request, id: id, owner: owner, context: context)
        default:
            var response = ProblemResponse.make(
                ReceiverError(.malformedRequest, "\(request.method.prefix(16)) is not allowed here"), status: 405)
            response.add("Allow", Self.allowed(route))
            return .respond(response)
        }
    }

    /// The request's owner: the token's client, or `loopback` when there are no tokens and the client is local.
    func owner(_ request: HTTPServerRequest) -> ClientIdentity? {
        guard let tokens else { return request.isLoopback ? ClientIdentity(Self.loopbackClient) : nil }
        return tokens.client(forAuthorization: request.header("Authorization")).map(ClientIdentity.init)
    }

    private func health() -> HTTPServerResponse {
        do {
            _ = try context.engine.catalog.openUploadCount(owner: ClientIdentity(Self.loopbackClient))
            var response = HTTPServerResponse(status: 200, body: Array("ok\n".utf8))
            response.add("Content-Type", "text/plain; charset=utf-8")
            return response
        } catch {
            return ProblemResponse.make(ReceiverError(.unavailable, "the catalogue does not answer"))
        }
    }

    private func discovery(_ request: HTTPServerRequest) -> HTTPServerResponse {
        let limits = context.engine.limits
        let version = (try? IETFHandler.version(request)) ?? .latest
        var response = HTTPServerResponse(status: 204, headers: NativeHandler.protocolHeaders)
        response.add(AetherWire.capabilitiesField, NativeHandler.capabilities(limits))
        response.add("Upload-Draft-Interop-Version", String(version.rawValue))
        response.add("Upload-Limit", IETFHandler.limitField(version, limits: limits))
        response.headers += TusHandler.discoveryFields(limits)
        return response
    }

    private func head(_ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity) -> HTTPServerResponse {
        let isTus = request.has("Tus-Resumable")
        if isTus, let refusal = TusHandler.checkVersion(request) { return refusal }
        do throws(ReceiverError) {
            let status = try context.engine.status(id, owner: owner)
            guard status.record.state != .expired else { throw ReceiverError(.expired, "the upload is gone") }
            switch status.record.uploadProtocol {
            case .tus: return TusHandler.head(status)
            case .ietf: return IETFHandler.head(request, status: status, context: context)
            case .native:
                var response = HTTPServerResponse(status: 200, headers: NativeHandler.headFields(status))
                if let size = status.record.size { response.add("Upload-Length", String(size)) }
                return response
            }
        } catch {
            // HEAD answers carry no body; the status and the protocol headers say it all.
            return ProblemResponse.make(error, headers: isTus ? TusHandler.resumable : [])
        }
    }

    private func cancel(_ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity) -> HTTPServerResponse {
        let isTus = request.has("Tus-Resumable")
        if isTus, let refusal = TusHandler.checkVersion(request) { return refusal }
        let headers =
            isTus
            ? TusHandler.resumable
            : request.has(AetherWire.protocolField) ? NativeHandler.protocolHeaders : []
        do throws(ReceiverError) {
            try context.engine.cancel(id, owner: owner)
            return HTTPServerResponse(status: 204, headers: headers)
        } catch {
            return ProblemResponse.make(error, headers: headers)
        }
    }

    private static func allowed(_ route: UploadRoute) -> String {
        switch route {
        case .uploads: "POST, OPTIONS"
        case .upload: "HEAD, GET, PATCH, DELETE, OPTIONS"
        case .chunk, .parity: "PUT"
        case .challenges, .possession, .complete: "POST"
        case .health: "GET, HEAD"
        case .metrics: "GET"
        }
    }
}
