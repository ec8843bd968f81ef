/// The HTTP version a request actually used (the telemetry's protocol field).
public enum HTTPProtocolVersion: String, Sendable, Equatable, Codable {
    /// HTTP/1.0 or HTTP/1.1.
    case http1 = "h1"
    /// HTTP/2 (TLS with ALPN "h2", or h2c with prior knowledge).
    case http2 = "h2"
    /// HTTP/3 over QUIC: reserved; Debian's libcurl is built without it, so it is never reported today.
    case http3 = "h3"
    /// No response arrived, so no version was negotiated.
    case unknown = "unknown"
}
