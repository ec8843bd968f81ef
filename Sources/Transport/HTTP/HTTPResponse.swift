/// A complete response: the final status and headers, the informational (1xx) responses that came before it,
/// the body, and what the exchange cost. A 4xx or 5xx status is a response, not an error.
public struct HTTPResponse: Sendable {
    /// The final status code (200...599).
    public let status: Int
    /// The final response's header fields.
    public let headers: HTTPHeaders
    /// The informational responses received before the final one, in order (e.g. 104 Upload Resumption
    /// Supported, 103 Early Hints). `100 Continue` appears here only if the server sent it unasked.
    public let informational: [HTTPInformationalResponse]
    /// The response body (at most the request's `responseBodyLimit` bytes).
    public let body: [UInt8]
    /// Timings, bytes, protocol and connection reuse.
    public let telemetry: HTTPTelemetry
}

/// One 1xx response: its status and header fields.
public struct HTTPInformationalResponse: Sendable, Equatable {
    /// 100...199.
    public let status: Int
    /// Its header fields.
    public let headers: HTTPHeaders
}
