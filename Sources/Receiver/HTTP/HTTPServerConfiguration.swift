/// How the HTTP server listens.
public struct HTTPServerConfiguration: Sendable {
    /// The address to bind (`127.0.0.1`, `::1`, `0.0.0.0`, `::`).
    public var bindAddress: String
    /// The port; 0 picks a free one (`HTTPServer.port` tells which).
    public var port: UInt16
    /// PEM certificate and key for HTTPS; nil serves plain HTTP.
    public var tls: (certificatePEM: String, keyPEM: String)?
    /// Seconds a connection may stay idle (no byte received) before it is closed; this is also the slow-body
    /// timeout: a body that stalls this long is cut short.
    public var idleTimeoutSeconds: UInt32
    /// Seconds a connection's first header block may take from the accept, however the bytes trickle in (a later
    /// one on a kept-alive connection may take `idleTimeoutSeconds` from the end of the request before it, also in
    /// all); 0 is no deadline. Past it the connection is closed: a client sending a header a byte at a time cannot
    /// hold a connection (slowloris).
    public var headerTimeoutSeconds: Double
    /// Memory libmicrohttpd gives each connection for headers and read buffering; large enough for fast
    /// bodies. Header blocks larger than about half of it are refused with 431 by libmicrohttpd.
    public var connectionMemoryLimit: Int
    /// Connections open at once, in all.
    public var connectionLimit: UInt32
    /// Connections open at once from one client address, an IPv6 client counted by its /64 (0: no limit); past
    /// it a new connection is closed at once.
    public var perClientConnectionLimit: UInt32
    /// Seconds a graceful stop waits for requests under way.
    public var stopDeadlineSeconds: Double

    /// Creates a configuration with the defaults (loopback, a free port, plain HTTP, `docs/RECEIVER.md` Limits).
    public init(
        bindAddress: String = "127.0.0.1", port: UInt16 = 0, idleTimeoutSeconds: UInt32 = 60,
        headerTimeoutSeconds: Double = 20, connectionMemoryLimit: Int = 512 * 1024, connectionLimit: UInt32 = 1024,
        perClientConnectionLimit: UInt32 = 64, stopDeadlineSeconds: Double = 30
    ) {
        self.bindAddress = bindAddress
        self.port = port
        self.tls = nil
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.headerTimeoutSeconds = headerTimeoutSeconds
        self.connectionMemoryLimit = connectionMemoryLimit
        self.connectionLimit = connectionLimit
        self.perClientConnectionLimit = perClientConnectionLimit
        self.stopDeadlineSeconds = stopDeadlineSeconds
    }
}
