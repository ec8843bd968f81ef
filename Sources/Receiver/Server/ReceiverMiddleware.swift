import AetherIO
import AetherTransport

/// A request on its way through the middleware: as the steps before made it, and the client an authentication
/// step found (nil before one ran).
struct RoutedRequest {
    /// The request (its method possibly replaced by an override).
    var http: HTTPServerRequest
    /// The authenticated client.
    var owner: ClientIdentity?
}

/// One concern in front of the routes (the shape of Hummingbird's `RouterMiddleware`): it answers the request
/// itself or hands it, possibly changed, to `next`, and may look at what comes back.
protocol ReceiverMiddleware: Sendable {
    /// Answers `request` or passes it on.
    func respond(to request: RoutedRequest, next: (RoutedRequest) -> HTTPRequestStart) -> HTTPRequestStart
}

extension Array where Element == any ReceiverMiddleware {
    /// Runs `request` through the steps in order, then `routes`.
    func respond(to request: RoutedRequest, routes: (RoutedRequest) -> HTTPRequestStart) -> HTTPRequestStart {
        guard let first else { return routes(request) }
        let rest = Array(dropFirst())
        return first.respond(to: request) { passed in rest.respond(to: passed, routes: routes) }
    }
}

/// Counts every immediate answer by status for `/metrics`, and sends no content with a `HEAD` answer (clients that
/// send `HEAD` do not wait for one).
struct AnswerAccounting: ReceiverMiddleware {
    let metrics: ReceiverMetrics

    func respond(to request: RoutedRequest, next: (RoutedRequest) -> HTTPRequestStart) -> HTTPRequestStart {
        let start = next(request)
        guard case .respond(var response) = start else { return start }
        metrics.answered(response.status)
        if request.http.method == "HEAD" { response.body = [] }
        return .respond(response)
    }
}

/// Refuses ambiguous message framing (two `Content-Length`s that disagree, `Transfer-Encoding` beside one) at the
/// headers, with the body unread: libmicrohttpd then closes the connection.
struct FramingCheck: ReceiverMiddleware {
    func respond(to request: RoutedRequest, next: (RoutedRequest) -> HTTPRequestStart) -> HTTPRequestStart {
        do throws(ReceiverError) {
            try RequestFields.checkFraming(request.http)
        } catch {
            return .respond(ProblemResponse.make(error))
        }
        return next(request)
    }
}

/// tus: `X-HTTP-Method-Override` on a `POST` stands for the method it names.
struct MethodOverride: ReceiverMiddleware {
    static let overridable: Set<String> = ["PATCH", "DELETE", "HEAD", "GET"]

    func respond(to request: RoutedRequest, next: (RoutedRequest) -> HTTPRequestStart) -> HTTPRequestStart {
        let original = request.http
        guard original.method == "POST", let override = original.header("X-HTTP-Method-Override") else {
            return next(request)
        }
        let method = override.trimmingSpacesAndTabs().uppercased()
        guard Self.overridable.contains(method) else {
            return .respond(
                ProblemResponse.make(ReceiverError(.malformedRequest, "X-HTTP-Method-Override names no method")))
        }
        var passed = request
        passed.http = HTTPServerRequest(
            method: method, path: original.path, headers: original.headers, clientAddress: original.clientAddress,
            isLoopback: original.isLoopback)
        return next(passed)
    }
}

/// Who a request comes from: the client its bearer token names, or `loopback` for a local client when the receiver
/// has no tokens.
struct Authentication: ReceiverMiddleware {
    /// The client name of requests without tokens (loopback only).
    static let loopbackClient = "loopback"

    let tokens: BearerTokens?

    /// The request's client; nil when it is not served.
    func owner(_ request: HTTPServerRequest) -> ClientIdentity? {
        guard let tokens else { return request.isLoopback ? ClientIdentity(Self.loopbackClient) : nil }
        return tokens.client(forAuthorization: request.header("Authorization")).map(ClientIdentity.init)
    }

    func respond(to request: RoutedRequest, next: (RoutedRequest) -> HTTPRequestStart) -> HTTPRequestStart {
        guard let owner = owner(request.http) else {
            let error =
                tokens == nil
                ? ReceiverError(.forbidden, "without a token file only loopback clients are served")
                : ReceiverError(.unauthorized, "a valid bearer token is required")
            return .respond(ProblemResponse.make(error))
        }
        var passed = request
        passed.owner = owner
        return next(passed)
    }
}

/// `/healthz`, `/metrics` (loopback or a valid token) and `OPTIONS` discovery, answered before authentication.
struct OperationalEndpoints: ReceiverMiddleware {
    let context: ReceiverContext
    let authentication: Authentication
    let connections: @Sendable () -> HTTPConnectionStatistics

    func respond(to request: RoutedRequest, next: (RoutedRequest) -> HTTPRequestStart) -> HTTPRequestStart {
        let http = request.http
        switch (try? UploadRoute(path: http.path), http.method) {
        case (.health?, "GET"), (.health?, "HEAD"):
            return .respond(health())
        case (.metrics?, "GET"):
            guard http.isLoopback || authentication.owner(http) != nil else {
                return .respond(ProblemResponse.make(ReceiverError(.unauthorized, "a bearer token is required")))
            }
            var response = HTTPServerResponse(
                status: 200, body: Array(context.metrics.render(connections: connections()).utf8))
            response.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return .respond(response)
        case (.uploads?, "OPTIONS"), (.upload?, "OPTIONS"):
            return .respond(discovery(http))
        default:
            return next(request)
        }
    }

    private func health() -> HTTPServerResponse {
        do {
            _ = try context.engine.catalog.openUploadCount(owner: ClientIdentity(Authentication.loopbackClient))
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
        response.add(AetherWire.capabilitiesField, NativeHandler.capabilities(context.engine))
        response.add("Upload-Draft-Interop-Version", String(version.rawValue))
        response.add("Upload-Limit", IETFHandler.limitField(version, limits: limits))
        response.headers += TusHandler.discoveryFields(limits)
        return response
    }
}
