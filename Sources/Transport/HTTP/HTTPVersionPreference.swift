/// Which HTTP version a request asks for.
public enum HTTPVersionPreference: Sendable, Equatable {
    /// HTTP/2 over TLS when the server offers it in ALPN, else HTTP/1.1; HTTP/1.1 in clear text.
    case automatic
    /// HTTP/1.1 only.
    case http1
    /// HTTP/2: over TLS through ALPN (HTTP/1.1 if the server refuses it); in clear text with prior
    /// knowledge (h2c: the connection starts with the HTTP/2 preface, no upgrade).
    case http2
}
