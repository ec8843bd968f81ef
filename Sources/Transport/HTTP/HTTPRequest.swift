/// One HTTP request for `HTTPClient.send(_:)`.
public struct HTTPRequest: Sendable {
    /// The method token (`GET`, `PUT`, `POST`, `PATCH`, `HEAD`, `DELETE`, `OPTIONS`, ...).
    public var method: String
    /// An absolute `http://` or `https://` URL.
    public var url: String
    /// Header fields to send. `Expect` is always sent empty (libcurl's `Expect: 100-continue` is switched off, so
    /// no request waits for a server that ignores it); `Content-Length` and `Transfer-Encoding` come from the body.
    public var headers: HTTPHeaders
    /// The request body.
    public var body: HTTPRequestBody
    /// Which HTTP version to ask for.
    public var version: HTTPVersionPreference
    /// Time limits.
    public var timeouts: HTTPTimeouts
    /// The largest response body kept in memory; a longer one fails with `.responseTooLarge`.
    public var responseBodyLimit: Int
    /// The request target sent instead of the URL's path, e.g. `*` for `OPTIONS *`. nil: the URL's path and query.
    public var requestTarget: String?

    /// A request; by default a GET with no body, automatic version, default timeouts and an 8 MiB response limit.
    public init(
        method: String = "GET", url: String, headers: HTTPHeaders = HTTPHeaders(),
        body: HTTPRequestBody = .empty, version: HTTPVersionPreference = .automatic,
        timeouts: HTTPTimeouts = HTTPTimeouts(), responseBodyLimit: Int = 8 << 20, requestTarget: String? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.version = version
        self.timeouts = timeouts
        self.responseBodyLimit = responseBodyLimit
        self.requestTarget = requestTarget
    }

    /// Whether the request carries a body (libcurl's upload mode): one is given, or the method takes one.
    var sendsBody: Bool { !body.isEmpty || ["PUT", "POST", "PATCH"].contains(method) }

    /// True for `https://` URLs (ASCII case-insensitive).
    var isTLS: Bool { url.utf8.count >= 8 && HTTPHeaders.equalNames(String(url.prefix(8)), "https://") }

    /// Checks what libcurl would otherwise accept silently or misread; throws `.invalidArgument`.
    func validate() throws(TransportError) {
        guard HTTPHeaders.isSendable(name: method, value: "") else {
            throw TransportError(.invalidArgument, "the method is not an HTTP token")
        }
        let lower = url.prefix(8).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw TransportError(.invalidArgument, "only http:// and https:// URLs are supported")
        }
        guard !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw TransportError(.invalidArgument, "the URL contains a space or a control character")
        }
        for field in headers where !HTTPHeaders.isSendable(name: field.name, value: field.value) {
            throw TransportError(.invalidArgument, "header \(field.name.prefix(64)) is not a token or has CR/LF/NUL")
        }
        if let requestTarget, requestTarget.isEmpty || requestTarget.utf8.contains(where: { $0 <= 0x20 }) {
            throw TransportError(.invalidArgument, "the request target is empty or has a space or control character")
        }
        guard responseBodyLimit >= 0 else {
            throw TransportError(.invalidArgument, "the response body limit is negative")
        }
    }
}
