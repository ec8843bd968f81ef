public import AetherIO
import AetherTransport

/// Routes the receiver's requests (`docs/PROTOCOL.md` sections 1-7): the middleware (accounting, framing, method
/// override, operational endpoints, authentication) in front, then the upload routes, which hand each request to
/// the protocol that speaks it; logs one line per request.
public final class ReceiverRouter: HTTPRequestRouter {
    /// The client name of requests without tokens (loopback only).
    public static let loopbackClient = Authentication.loopbackClient

    let context: ReceiverContext
    private let authentication: Authentication
    private let middleware: [any ReceiverMiddleware]
    private let log: RequestLog

    /// A router over `engine`. Without `tokens` only loopback clients are served.
    public init(
        engine: UploadEngine, tokens: BearerTokens?, metrics: ReceiverMetrics, log: RequestLog,
        clock: any AetherClock = SystemClock(),
        connections: @escaping @Sendable () -> HTTPConnectionStatistics = { HTTPConnectionStatistics() }
    ) {
        let context = ReceiverContext(engine: engine, metrics: metrics, clock: clock)
        let authentication = Authentication(tokens: tokens)
        self.context = context
        self.authentication = authentication
        self.log = log
        middleware = [
            AnswerAccounting(metrics: metrics), FramingCheck(), MethodOverride(),
            OperationalEndpoints(context: context, authentication: authentication, connections: connections),
            authentication,
        ]
    }

    public func start(_ request: HTTPServerRequest) -> HTTPRequestStart {
        middleware.respond(to: RoutedRequest(http: request, owner: nil)) { routed in
            guard let owner = routed.owner else {
                return .respond(ProblemResponse.make(ReceiverError(.unauthorized, "a valid bearer token is required")))
            }
            return route(routed.http, owner: owner)
        }
    }

    public func ended(_ request: HTTPServerRequest, status: Int?, bytesReceived: Int64, nanoseconds: UInt64) {
        let id = (try? UploadRoute(path: request.path))?.uploadID?.rawValue
        log.request(
            RequestLog.Entry(
                method: request.method, route: request.path, status: status, bytes: bytesReceived,
                milliseconds: Double(nanoseconds) / 1e6, uploadID: id, client: owner(request)?.name))
    }

    /// The request's owner: the token's client, or `loopback` when there are no tokens and the client is local.
    func owner(_ request: HTTPServerRequest) -> ClientIdentity? { authentication.owner(request) }

    /// The upload routes of an authenticated request.
    private func route(_ request: HTTPServerRequest, owner: ClientIdentity) -> HTTPRequestStart {
        let route: UploadRoute
        do {
            route = try UploadRoute(path: request.path)
        } catch {
            return .respond(ProblemResponse.make(error))
        }
        switch (route, request.method) {
        case (.uploads, "POST"):
            guard let handler = UploadProtocols.speaking(request) else {
                return .respond(
                    ProblemResponse.make(
                        ReceiverError(
                            .unknownProtocol,
                            "POST /uploads carries none of Aether-Protocol, Tus-Resumable, Upload-Complete")))
            }
            if let refusal = handler.refusal(request) { return .respond(refusal) }
            return handler.create(request, owner: owner, context: context)
        case (.batch, "POST"):
            return NativeHandler.batch(request, owner: owner, context: context)
        case (.upload(let id), "HEAD"):
            return .respond(head(request, id: id, owner: owner))
        case (.upload(let id), "GET"):
            return .respond(NativeHandler.status(request, id: id, owner: owner, context: context))
        case (.upload(let id), "PATCH"):
            return UploadProtocols.appending(request).append(request, id: id, owner: owner, context: context)
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
        case (.capture(let id), "GET"):
            return .respond(NativeHandler.capture(request, id: id, owner: owner, context: context))
        case (.complete(let id), "POST"):
            return NativeHandler.complete(request, id: id, owner: owner, context: context)
        default:
            var response = ProblemResponse.make(
                ReceiverError(.malformedRequest, "\(request.method.prefix(16)) is not allowed here"), status: 405)
            response.add("Allow", Self.allowed(route))
            return .respond(response)
        }
    }

    /// Offset retrieval in the protocol the upload was stored under; errors carry the fields of the protocol the
    /// request speaks (HEAD answers have no body).
    private func head(_ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity) -> HTTPServerResponse {
        let speaking = UploadProtocols.speaking(request)
        if let refusal = speaking?.refusal(request) { return refusal }
        do throws(ReceiverError) {
            let status = try context.engine.status(id, owner: owner)
            guard status.record.state != .expired else { throw ReceiverError(.expired, "the upload is gone") }
            return UploadProtocols.handler(of: status.record.uploadProtocol).head(
                request, status: status, context: context)
        } catch {
            return ProblemResponse.make(error, headers: speaking?.answerFields ?? [])
        }
    }

    private func cancel(_ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity) -> HTTPServerResponse {
        let speaking = UploadProtocols.speaking(request)
        if let refusal = speaking?.refusal(request) { return refusal }
        let headers = speaking?.answerFields ?? []
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
        case .batch, .challenges, .possession, .complete: "POST"
        case .capture: "GET"
        case .health: "GET, HEAD"
        case .metrics: "GET"
        }
    }
}
