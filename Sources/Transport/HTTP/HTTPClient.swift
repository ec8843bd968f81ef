import Synchronization

/// The HTTP client: one libcurl multi handle driven by one dedicated thread, shared by every request of the
/// process (make one per process; `shared()` is the usual one). HTTP/1.1 and HTTP/2 (ALPN over TLS, or prior
/// knowledge in clear text), several HTTP/2 streams on one connection, keep-alive reuse, TLS 1.2 or later with
/// optional certificate pinning, proxies from the environment.
///
/// `send(_:)` suspends the calling task until the response is complete; cancelling the task stops the transfer at
/// once (its handle leaves the multi handle, its connection is closed) and throws `.cancelled`.
public final class HTTPClient: Sendable {
    private let loop: HTTPEventLoop
    /// The configuration every request uses.
    public let configuration: HTTPClientConfiguration

    private static let sharedClient = Result<HTTPClient, TransportError> { () throws(TransportError) in
        try HTTPClient()
    }

    /// The process's client with the default configuration (system trust, no pins, environment proxies).
    public static func shared() throws(TransportError) -> HTTPClient { try sharedClient.get() }

    /// A client with its own thread and connection cache. Throws `.systemCall` when libcurl or the thread cannot
    /// be set up.
    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration()) throws(TransportError) {
        guard configuration.maximumHeaderBytes > 0, configuration.uploadBufferSize > 0 else {
            throw TransportError(.invalidArgument, "header and upload buffer limits must be positive")
        }
        self.configuration = configuration
        loop = try HTTPEventLoop(configuration: configuration)
        try loop.start()
    }

    deinit { loop.shutDown() }

    /// The libcurl version in use, e.g. "7.88.1".
    public static var libcurlVersion: String { Curl.version.text }

    /// Whether the libcurl in use was built with HTTP/2.
    public static var supportsHTTP2: Bool { Curl.version.http2 }

    /// Sends `request` and returns the complete response (any status). Throws a `TransportError` whose code says
    /// what failed: `.invalidArgument`, `.hostNotFound`, `.connectionRefused`, `.timedOut`, `.tlsHandshakeFailed`,
    /// `.certificateRejected`, `.pinMismatch`, `.connectionClosed`, `.protocolViolation`, `.headerTooLarge`,
    /// `.responseTooLarge`, `.bodySourceFailed`, `.cancelled`.
    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        try request.validate()
        let transfer = loop.makeTransfer(request)
        let loop = self.loop
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<HTTPResponse, TransportError>, Never>) in
                transfer.install(continuation)
                if !loop.submit(.start(transfer)) {
                    transfer.finish(.failure(TransportError(.cancelled, "the HTTP client has shut down")))
                }
            }
        } onCancel: {
            transfer.cancelRequested.store(true, ordering: .releasing)
            loop.submit(.cancel(transfer.id))
        }
        let response = try result.get()
        HTTPTelemetryObserver.current?.record(response.telemetry)
        return response
    }

    /// The network path changed (a default route moved, an interface went down): every request still running fails
    /// at once with `.connectionClosed` (its connection may be on the old path, where it would only stall until its
    /// idle limit), and later requests open new connections rather than reuse one opened before now. `reason` goes
    /// into the errors' message.
    public func abandonInFlight(reason: String) { loop.submit(.abandonAll(reason)) }

    /// Stops the thread: requests still running fail with `.cancelled` and cached connections close. Later sends
    /// fail with `.cancelled`. Also done when the client is released.
    public func shutDown() { loop.shutDown() }
}
