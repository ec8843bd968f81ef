public import AetherIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A running receiver: the engine over a store directory (recovered at start), the HTTP server on one port, and
/// a timer that expires abandoned uploads. `aether serve` is this plus flags; tests embed it.
public final class ReceiverServer: Sendable {
    /// How to run.
    public struct Options: Sendable {
        /// The store directory.
        public var directory: FilePath
        /// Where and how to listen.
        public var http: HTTPServerConfiguration
        /// What uploads may be.
        public var limits: ReceiverLimits
        /// Bearer tokens; nil serves loopback clients only.
        public var tokens: BearerTokens?
        /// Request log format.
        public var logFormat: RequestLog.Format
        /// Seconds between expiry sweeps at most; the sweep runs at least four times per expiry time, since each
        /// round also records the activity of uploads being received (`UploadEngine.expire`), which a fleet's other
        /// receivers must see before they would find the upload idle.
        public var expirySweepSeconds: Double
        /// A PostgreSQL catalogue (`postgres://USER@HOST/DB`) instead of `directory/catalog.sqlite3`; blobs stay in
        /// `directory`.
        public var catalogURL: String? = nil
        /// A blob store instead of the directory's (fleet mode: an `S3BlobStore`); without `catalogURL` the SQLite
        /// catalogue stays in `directory`.
        public var blobs: (any BlobStore)? = nil

        /// Options for a store at `directory`.
        public init(
            directory: FilePath, http: HTTPServerConfiguration = HTTPServerConfiguration(),
            limits: ReceiverLimits = ReceiverLimits(), tokens: BearerTokens? = nil,
            logFormat: RequestLog.Format = .text,
            expirySweepSeconds: Double = 60
        ) {
            self.directory = directory
            self.http = http
            self.limits = limits
            self.tokens = tokens
            self.logFormat = logFormat
            self.expirySweepSeconds = expirySweepSeconds
        }
    }

    /// The engine.
    public let engine: UploadEngine
    /// The counters.
    public let metrics: ReceiverMetrics
    /// The HTTP server.
    public let http: HTTPServer
    /// What recovery found at start.
    public let recovery: RecoveryReport
    private let log: RequestLog
    private let sweeper: Sweeper
    private let connections: ConnectionCounter
    /// The store directory's lock, held until `stop` (nil in fleet mode).
    private let storeLock: Mutex<ExclusiveLockFile?>

    /// The catalogue of a receiver whose blobs are elsewhere: PostgreSQL, or SQLite in the directory (created).
    private static func catalog(_ options: Options) throws(ReceiverError) -> any UploadCatalog {
        if let catalogURL = options.catalogURL { return try PostgresCatalog(url: catalogURL) }
        try DirectoryBlobStore.makeDirectory(options.directory)
        return try SQLiteUploadCatalog(path: options.directory.appending("catalog.sqlite3"))
    }

    /// Opens the store, recovers it, and starts listening. Binding a non-loopback address without tokens is
    /// refused (`.forbidden`), as is an address that is not IPv4 or IPv6.
    public init(
        _ options: Options, clock: any AetherClock = SystemClock(), logSink: (@Sendable (String) -> Void)? = nil
    ) throws(ReceiverError) {
        if options.tokens == nil, !Self.isLoopback(options.http.bindAddress) {
            throw ReceiverError(
                .forbidden,
                "binding \(options.http.bindAddress) serves other machines: give --tokens, or bind 127.0.0.1 or ::1")
        }
        var httpConfiguration = options.http
        httpConfiguration.connectionLimit = try Self.connectionLimit(options.http.connectionLimit)
        // The directory holds the blobs or the SQLite catalogue unless both are elsewhere (fleet mode).
        let storeLock =
            options.blobs != nil && options.catalogURL != nil ? nil : try StoreLock.take(options.directory)
        let engine: UploadEngine
        if let blobs = options.blobs {
            engine = UploadEngine(
                blobs: blobs, catalog: try Self.catalog(options), limits: options.limits, clock: clock)
        } else if let catalogURL = options.catalogURL {
            engine = UploadEngine(
                blobs: try DirectoryBlobStore(root: options.directory), catalog: try PostgresCatalog(url: catalogURL),
                limits: options.limits, clock: clock)
        } else {
            engine = try UploadEngine(directory: options.directory, limits: options.limits, clock: clock)
        }
        self.recovery = try engine.recover()
        self.engine = engine
        self.storeLock = Mutex(storeLock)
        let metrics = ReceiverMetrics()
        self.metrics = metrics
        let log = RequestLog(format: options.logFormat, sink: logSink)
        self.log = log
        let connections = ConnectionCounter()
        let router = ReceiverRouter(
            engine: engine, tokens: options.tokens, metrics: metrics, log: log, clock: clock,
            connections: { connections.statistics })
        let http = try HTTPServer(configuration: httpConfiguration, router: router, clock: clock)
        connections.server.withLock { $0 = http }
        self.connections = connections
        self.http = http
        self.sweeper = Sweeper(
            engine: engine, log: log,
            interval: min(options.expirySweepSeconds, Double(options.limits.expirySeconds) / 4))
        sweeper.start()
    }

    /// Descriptors kept aside from connections: the catalogue (database, WAL, shared memory), the store's lock, the
    /// listening socket, the standard streams, objects being assembled, and libdispatch's reads of `/proc` (which
    /// end the process when they fail: `OpenFileLimit`).
    public static let reservedDescriptors = 64

    /// The fewest connections a receiver starts with.
    public static let minimumConnections = 8

    /// `configured`, lowered so that the connections (a socket each, and the file of the upload it writes) and the
    /// reserve fit under the open-file limit; a limit too low for `minimumConnections` is refused at start, with the
    /// step to take, rather than met later as failed requests or a crash.
    static func connectionLimit(_ configured: UInt32) throws(ReceiverError) -> UInt32 {
        let available = OpenFileLimit.current
        let needed = reservedDescriptors + 2 * minimumConnections
        guard available >= needed else {
            throw ReceiverError(
                .unavailable,
                "the open-file limit is \(available), under the \(needed) a receiver needs (\(reservedDescriptors) for"
                    + " its store and two for each connection)",
                errno: EMFILE)
        }
        return min(configured, UInt32(clamping: (available - reservedDescriptors) / 2))
    }

    /// The URL clients use (`http://127.0.0.1:PORT`, IPv6 in brackets).
    public var url: String {
        let host = http.bindAddress.contains(":") ? "[\(http.bindAddress)]" : http.bindAddress
        return "\(http.isTLS ? "https" : "http")://\(host):\(http.port)"
    }

    /// Graceful stop: no new connections, requests under way finish (up to the deadline), the sweeper ends.
    public func stop() {
        sweeper.stop()
        http.stop()
        // The router's connection counter refers back to the server: let go of it so both can be freed.
        connections.server.withLock { $0 = nil }
        // Requests under way have finished: another receiver may take the store.
        storeLock.withLock { $0 = nil }
    }

    deinit { stop() }

    /// Whether `address` is a loopback address (127.0.0.0/8 or ::1).
    public static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.") || address == "::ffff:127.0.0.1"
    }
}

/// The HTTP server's connection statistics, read by `/metrics` (the router exists before the server).
private final class ConnectionCounter: Sendable {
    let server = Mutex<HTTPServer?>(nil)
    var statistics: HTTPConnectionStatistics { server.withLock { $0?.statistics ?? HTTPConnectionStatistics() } }
}

/// Runs `UploadEngine.expire` every `interval` seconds.
private final class Sweeper: Sendable {
    private let engine: UploadEngine
    private let log: RequestLog
    private let interval: Double
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(engine: UploadEngine, log: RequestLog, interval: Double) {
        self.engine = engine
        self.log = log
        self.interval = max(0.05, interval)
    }

    func start() {
        let engine = engine
        let log = log
        let interval = interval
        let sweep = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
                guard !Task.isCancelled else { return }
                do {
                    let expired = try engine.expire()
                    if !expired.isEmpty { log.event("expired \(expired.count) idle uploads") }
                } catch {
                    log.event("expiry sweep failed: \((error as? ReceiverError)?.message ?? "storage error")")
                }
            }
        }
        task.withLock { $0 = sweep }
    }

    func stop() {
        task.withLock { $0?.cancel() }
    }
}
