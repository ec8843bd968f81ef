public import AetherSecurity

/// How a client connects: trust, pins, proxy, and buffer sizes. Every request of a client shares it, so that a
/// connection libcurl keeps for reuse was always verified the same way.
public struct HTTPClientConfiguration: Sendable {
    /// A PEM bundle of trust anchors; nil uses the system trust store (libcurl's built-in CA bundle path).
    public var trustAnchorsFile: String?
    /// With a pin manager, every TLS connection's verified chain must also match one of its pins
    /// (`CertificatePinManager.installPinning`, run from libcurl's `CURLOPT_SSL_CTX_FUNCTION`). TLS sessions are
    /// then never resumed, so every connection is verified.
    public var pinning: CertificatePinManager?
    /// The proxy; by default libcurl's standard environment variables.
    public var proxy: HTTPProxy
    /// libcurl's upload buffer (`CURLOPT_UPLOAD_BUFFERSIZE`; libcurl keeps it within 16 KiB...2 MiB).
    public var uploadBufferSize: Int
    /// The largest response header section accepted, all blocks (1xx included) counted; more fails with
    /// `.headerTooLarge`. libcurl's own limits (100 KiB per line, 300 KiB in all) apply too.
    public var maximumHeaderBytes: Int
    /// Sent as `User-Agent` unless a request sets its own.
    public var userAgent: String
    /// A kept-alive connection idle for longer than this many seconds is closed instead of reused
    /// (`CURLOPT_MAXAGE_CONN`). Servers close idle connections after their own keep-alive time (uvicorn,
    /// hypercorn, Apache and Node: 5 s); a request sent on one they are closing at that moment fails with a reset
    /// that costs a retry. 4 s stays under those; a new connection costs one round trip.
    public var idleReuseLimit: Int
    /// The most bytes per second one request's body is sent at (`CURLOPT_MAX_SEND_SPEED_LARGE`); nil for no cap.
    /// `aether upload --max-rate` sets it to the upload's cap, so that no request bursts past it while the
    /// uploader spaces the requests (`RatePacer`).
    public var maximumSendBytesPerSecond: Int64?
    /// The TCP congestion control asked for on every new connection (`TCP_CONGESTION` from libcurl's socket-option
    /// callback), e.g. `bbr`; nil leaves the system's default. Where the system refuses it (not available, or not in
    /// `net.ipv4.tcp_allowed_congestion_control` for an unprivileged process) the connection keeps the default;
    /// `HTTPTelemetry.congestionControl` says which one each request ran on.
    public var congestionControl: String?

    /// The congestion control asked for by default: BBR, which keeps its rate through random loss where loss-based
    /// controls (CUBIC, Reno) collapse (`docs/SCHEDULING.md`, "Transport choices").
    public static let defaultCongestionControl = "bbr"

    /// The defaults: system trust, no pins, proxies from the environment, 1 MiB upload buffer, 64 KiB of headers.
    public init(
        trustAnchorsFile: String? = nil, pinning: CertificatePinManager? = nil, proxy: HTTPProxy = .environment,
        uploadBufferSize: Int = 1 << 20, maximumHeaderBytes: Int = 64 << 10, userAgent: String = "aether/1",
        idleReuseLimit: Int = 4, maximumSendBytesPerSecond: Int64? = nil,
        congestionControl: String? = HTTPClientConfiguration.defaultCongestionControl
    ) {
        self.trustAnchorsFile = trustAnchorsFile
        self.pinning = pinning
        self.proxy = proxy
        self.uploadBufferSize = uploadBufferSize
        self.maximumHeaderBytes = maximumHeaderBytes
        self.userAgent = userAgent
        self.idleReuseLimit = max(idleReuseLimit, 0)
        self.maximumSendBytesPerSecond = maximumSendBytesPerSecond.map { max($0, 1) }
        self.congestionControl = congestionControl.flatMap { name in
            // TCP_CONGESTION takes a name of at most 15 bytes (TCP_CA_NAME_MAX less its terminator).
            !name.isEmpty && name.utf8.count < 16
                && name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
                ? name : nil
        }
    }
}
