/// What a route does with a request once its headers are read: answer at once, or take its body.
public enum HTTPRequestStart: Sendable {
    /// Answer now; any body is not read.
    case respond(HTTPServerResponse)
    /// Stream the body to this sink, then answer with what `finish` returns.
    case stream(any HTTPRequestSink)
}

/// The receiver of one request's body. libmicrohttpd calls it from the connection's thread only, one call at
/// a time, so a sink needs no lock of its own; the whole body is never held in memory.
public protocol HTTPRequestSink: AnyObject, Sendable {
    /// The next piece of the body as it arrived; valid only during the call.
    func receive(_ bytes: UnsafeRawBufferPointer)
    /// The body ended as declared; returns the answer.
    func finish() -> HTTPServerResponse
    /// The body was cut short (client gone, timeout, shutdown): no answer can be sent.
    func interrupted()
}

/// Routes requests: called on a connection thread once a request's headers are read.
public protocol HTTPRequestRouter: Sendable {
    /// Decides what to do with `request`.
    func start(_ request: HTTPServerRequest) -> HTTPRequestStart
    /// The request is over (answered, or cut short): one call per `start`, for logs and metrics.
    func ended(_ request: HTTPServerRequest, status: Int?, bytesReceived: Int64, nanoseconds: UInt64)
}
