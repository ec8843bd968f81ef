/// What one request cost, as libcurl measured it (`curl_easy_getinfo`).
///
/// Durations are from the start of the request: DNS is the name lookup; `connect` is the TCP handshake alone;
/// `tlsHandshake` the TLS handshake alone (zero in clear text or on a reused connection); `firstByte` the time until
/// the first response byte; `total` the whole exchange.
public struct HTTPTelemetry: Sendable, Equatable {
    /// The HTTP version used.
    public var protocolVersion: HTTPProtocolVersion
    /// Time spent resolving the host name.
    public var nameLookup: Duration
    /// Time spent on the TCP handshake (after the lookup).
    public var connect: Duration
    /// Time spent on the TLS handshake (after TCP).
    public var tlsHandshake: Duration
    /// Time from the start until the first byte of the response.
    public var firstByte: Duration
    /// Time from the start until the end.
    public var total: Duration
    /// Request body bytes sent.
    public var bytesSent: Int64
    /// Response body bytes received.
    public var bytesReceived: Int64
    /// Response header bytes received (all header blocks, 1xx included).
    public var headerBytesReceived: Int64
    /// True when the request ran on a connection that already existed (libcurl made no new connection for it).
    public var connectionReused: Bool
    /// The TCP congestion control of the request's connection (`TCP_CONGESTION`), nil when the system did not say.
    public var congestionControl: String?

    /// Telemetry with every field given.
    public init(
        protocolVersion: HTTPProtocolVersion, nameLookup: Duration, connect: Duration, tlsHandshake: Duration,
        firstByte: Duration, total: Duration, bytesSent: Int64, bytesReceived: Int64, headerBytesReceived: Int64,
        connectionReused: Bool, congestionControl: String? = nil
    ) {
        self.protocolVersion = protocolVersion
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.firstByte = firstByte
        self.total = total
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.headerBytesReceived = headerBytesReceived
        self.connectionReused = connectionReused
        self.congestionControl = congestionControl
    }

    /// Builds telemetry from libcurl's cumulative timestamps (microseconds since the start).
    init(
        protocolVersion: HTTPProtocolVersion, nameLookupMicros: Int64, connectMicros: Int64, tlsMicros: Int64,
        firstByteMicros: Int64, totalMicros: Int64, bytesSent: Int64, bytesReceived: Int64,
        headerBytesReceived: Int64, newConnections: Int, congestionControl: String? = nil
    ) {
        func span(_ from: Int64, _ to: Int64) -> Duration { .microseconds(max(0, to - from)) }
        self.protocolVersion = protocolVersion
        self.nameLookup = .microseconds(max(0, nameLookupMicros))
        self.connect = span(nameLookupMicros, connectMicros)
        // libcurl reports 0 for the TLS timestamp in clear text.
        self.tlsHandshake = tlsMicros > 0 ? span(connectMicros, tlsMicros) : .zero
        self.firstByte = .microseconds(max(0, firstByteMicros))
        self.total = .microseconds(max(0, totalMicros))
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.headerBytesReceived = headerBytesReceived
        self.connectionReused = newConnections == 0
        self.congestionControl = congestionControl
    }
}
