public import AetherIO
internal import CAetherMicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The receiver's HTTP server: libmicrohttpd with an internal polling thread and one thread per connection
/// (a route may block on fsync without holding up other clients). Requests become `HTTPServerRequest`s, bodies
/// are streamed piece by piece to the route's `HTTPRequestSink`, a body cut short (client gone, timeout,
/// shutdown) reaches the sink's `interrupted()`. `Expect: 100-continue` is answered by libmicrohttpd.
/// Connections are admitted and cut by a `ConnectionGuard` (per-client limit, header deadline) through
/// libmicrohttpd's accept policy and connection notifications.
///
/// This is the only file that imports `CAetherMicroHTTPD`.
public final class HTTPServer: Sendable {
    /// The port the server listens on (the chosen one when the configuration asked for 0).
    public let port: UInt16
    /// The address it is bound to.
    public let bindAddress: String
    /// Whether it speaks HTTPS.
    public let isTLS: Bool
    private let daemon: DaemonHandle
    private let context: ServerContext
    private let stopDeadline: Double

    /// Starts listening; throws `.unavailable` when the address cannot be bound or TLS cannot be set up.
    public init(
        configuration: HTTPServerConfiguration, router: any HTTPRequestRouter, clock: any AetherClock = SystemClock()
    ) throws(ReceiverError) {
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_POLL.rawValue
            | MHD_USE_ITC.rawValue
        guard let address = SocketAddress(configuration.bindAddress, port: configuration.port) else {
            throw ReceiverError(.malformedRequest, "the bind address is not an IPv4 or IPv6 address")
        }
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        if configuration.tls != nil, MHD_is_feature_supported(.FEATURE_TLS) != .YES {
            throw ReceiverError(.unavailable, "this libmicrohttpd was built without TLS")
        }
        let connectionGuard = ConnectionGuard(
            perClientLimit: Int(configuration.perClientConnectionLimit),
            headerTimeoutSeconds: configuration.headerTimeoutSeconds,
            keepAliveSeconds: Double(configuration.idleTimeoutSeconds),
            connectionLimit: Int(configuration.connectionLimit), clock: clock)
        let context = ServerContext(router: router, connectionGuard: connectionGuard)
        let contextPointer = unsafe Unmanaged.passRetained(context).toOpaque()
        let memoryLimit = max(64 * 1024, configuration.connectionMemoryLimit)
        // MHD_start_daemon (through caether_mhd_start, which passes the options): binds, listens, starts threads.
        let handle: OpaquePointer? = unsafe address.withSockaddr { sockaddr in
            unsafe configuration.tls.map { $0.keyPEM }.withOptionalCString { key in
                unsafe configuration.tls.map { $0.certificatePEM }.withOptionalCString { cert in
                    unsafe caether_mhd_start(
                        flags, sockaddr, accessHandler, contextPointer, completedHandler, acceptHandler,
                        connectionHandler, configuration.idleTimeoutSeconds, memoryLimit,
                        configuration.connectionLimit, key, cert)
                }
            }
        }
        guard let handle = unsafe handle else {
            unsafe Unmanaged<ServerContext>.fromOpaque(contextPointer).release()
            let reason = configuration.tls == nil ? "" : " (or the TLS certificate and key are not usable PEM)"
            throw ReceiverError(
                .unavailable, "cannot listen on \(configuration.bindAddress) port \(configuration.port)\(reason)")
        }
        self.daemon = unsafe DaemonHandle(handle, context: contextPointer)
        self.context = context
        self.port = unsafe caether_mhd_bound_port(handle)
        self.bindAddress = configuration.bindAddress
        self.isTLS = configuration.tls != nil
        self.stopDeadline = configuration.stopDeadlineSeconds
        self.configuration = configuration
        connectionGuard.start()
    }

    private let configuration: HTTPServerConfiguration

    /// Connections open now.
    public var connectionCount: Int { unsafe daemon.withHandle { unsafe Int(caether_mhd_connection_count($0)) } ?? 0 }

    /// The connection limits and what they refused and cut since start.
    public var statistics: HTTPConnectionStatistics {
        let (counters, _) = context.connectionGuard.snapshot
        return HTTPConnectionStatistics(
            open: connectionCount, limit: Int(configuration.connectionLimit),
            perClientLimit: Int(configuration.perClientConnectionLimit),
            headerTimeoutSeconds: max(0, configuration.headerTimeoutSeconds),
            idleTimeoutSeconds: Double(configuration.idleTimeoutSeconds), accepted: counters.accepted,
            refusedPerClient: counters.refusedPerClient, closedHeaderTimeout: counters.closedHeaderTimeout,
            closedIdleTimeout: counters.closedIdleTimeout, closedEvicted: counters.closedEvicted,
            refusedFairShare: counters.refusedFairShare)
    }

    /// Requests under way now (headers read, answer not yet sent).
    public var requestsInFlight: Int { context.inFlight.load(ordering: .relaxed) }

    /// Graceful stop: stops accepting connections, lets the requests under way finish up to the configured
    /// deadline, then closes everything (requests still running see `interrupted()`). Idempotent.
    public func stop() {
        guard let listener = daemon.quiesce() else { return }
        context.connectionGuard.stop()
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(stopDeadline * 1000)))
        while context.inFlight.load(ordering: .relaxed) > 0, ContinuousClock.now < deadline {
            usleep(10_000)
        }
        daemon.stop(listener: listener)
    }

    deinit { stop() }
}

/// The daemon pointer, used under a lock so `stop` runs once.
private final class DaemonHandle: Sendable {
    @safe private struct State {
        // The pointers are only handed to libmicrohttpd, under this lock.
        nonisolated(unsafe) var daemon: OpaquePointer?
        nonisolated(unsafe) var context: UnsafeMutableRawPointer?
        var quiesced = false
    }
    private let state: Mutex<State>

    init(_ daemon: OpaquePointer, context: UnsafeMutableRawPointer) {
        state = unsafe Mutex(State(daemon: daemon, context: context))
    }

    func withHandle(_ body: (OpaquePointer) -> Int) -> Int? {
        state.withLock { state in unsafe state.daemon.map(body) }
    }

    /// Stops accepting; returns the listening socket (closed after the daemon stops), or nil when already done.
    func quiesce() -> Int32?? {
        state.withLock { state -> Int32?? in
            guard let daemon = unsafe state.daemon, !state.quiesced else { return nil }
            state.quiesced = true
            // MHD_quiesce_daemon: no new connections; returns the listening socket (ours to close later).
            let socket = unsafe MHD_quiesce_daemon(daemon)
            guard socket >= 0 else { return .some(nil) }
            // shutdown(2): connections still queued are reset and new ones refused; the descriptor stays open
            // until the daemon stops, as libmicrohttpd asks.
            _ = shutdown(socket, Int32(SHUT_RDWR))
            return .some(socket)
        }
    }

    func stop(listener: Int32?) {
        let taken = unsafe state.withLock { state -> (OpaquePointer, UnsafeMutableRawPointer)? in
            guard let daemon = unsafe state.daemon, let context = unsafe state.context else { return nil }
            unsafe state.daemon = nil
            unsafe state.context = nil
            return unsafe (daemon, context)
        }
        guard let (daemon, context) = unsafe taken else { return }
        // MHD_stop_daemon: closes every connection (requests still running get their completion callback).
        unsafe MHD_stop_daemon(daemon)
        if let listener { _ = close(listener) }
        unsafe Unmanaged<ServerContext>.fromOpaque(context).release()
    }
}

/// What the C callbacks reach through their `cls` pointer.
private final class ServerContext: Sendable {
    let router: any HTTPRequestRouter
    let connectionGuard: ConnectionGuard
    let inFlight = Atomic<Int>(0)
    init(router: any HTTPRequestRouter, connectionGuard: ConnectionGuard) {
        self.router = router
        self.connectionGuard = connectionGuard
    }
}

/// A connection's id for the guard: its libmicrohttpd handle's address, unique while it is open.
private func connectionID(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: connection)) }

/// The accept policy (MHD_AcceptPolicyCallback): called on the accepting thread for each new socket, before the
/// connection exists; a refusal closes the socket at once.
private func acceptHandler(
    _ cls: UnsafeMutableRawPointer?, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t
) -> MHD_Result {
    guard let cls = unsafe cls else { return .NO }
    let server = unsafe Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    return server.connectionGuard.admit(unsafe clientKey(address)) ? .YES : .NO
}

/// MHD_NotifyConnectionCallback: a connection started (on the accepting thread, right after its accept policy
/// call) or closed (before libmicrohttpd closes its socket).
private func connectionHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_ConnectionNotificationCode
) {
    guard let cls = unsafe cls, let connection = unsafe connection else { return }
    let server = unsafe Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    if code == .CONNECTION_NOTIFY_STARTED {
        let key = unsafe clientKey(caether_mhd_client_address(connection))
        unsafe server.connectionGuard.opened(
            connectionID(connection), key: key, socket: caether_mhd_connection_socket(connection))
    } else {
        unsafe server.connectionGuard.closed(connectionID(connection))
    }
}

/// The per-client key of a socket address: an IPv4 address (also when IPv4-mapped) or an IPv6 /64.
private func clientKey(_ address: UnsafePointer<sockaddr>?) -> ClientAddressKey {
    guard let address = unsafe address else { return .other }
    switch Int32(unsafe address.pointee.sa_family) {
    case AF_INET:
        return unsafe address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
            .v4(UInt32(bigEndian: unsafe v4.pointee.sin_addr.s_addr))
        }
    case AF_INET6:
        return unsafe address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
            var raw = unsafe v6.pointee.sin6_addr
            let bytes = unsafe withUnsafeBytes(of: &raw) { unsafe Array($0) }
            if bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) {
                return .v4(bytes[12...].reduce(0) { $0 << 8 | UInt32($1) })
            }
            return .v6Prefix(bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
        }
    default:
        return .other
    }
}

/// One request's state between libmicrohttpd's calls. Only the connection's own thread touches it (thread per
/// connection), one call at a time.
private final class RequestState: @unchecked Sendable {
    // @unchecked: mutated only from the one connection thread libmicrohttpd calls back on.
    let request: HTTPServerRequest
    let started: ContinuousClock.Instant
    var sink: (any HTTPRequestSink)?
    var pending: HTTPServerResponse?
    var status: Int?
    var bytes: Int64 = 0
    var finished = false

    init(request: HTTPServerRequest) {
        self.request = request
        self.started = .now
    }
}

/// Collects header lines for `MHD_get_connection_values`.
private final class HeaderCollector {
    var headers: [(name: String, value: String)] = []
}

/// The access handler (MHD_AccessHandlerCallback): first call with the headers, then one per body piece, then
/// a last call with no data once the body is complete.
private func accessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?, _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls = unsafe cls, let connection = unsafe connection, let requestContext = unsafe requestContext,
        let uploadDataSize = unsafe uploadDataSize
    else { return .NO }
    let server = unsafe Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    guard let existing = unsafe requestContext.pointee else {
        // The header block is complete: the header deadline no longer applies to this connection.
        unsafe server.connectionGuard.headerReceived(connectionID(connection))
        let request = unsafe makeRequest(connection, url: url, method: method)
        let state = RequestState(request: request)
        unsafe requestContext.pointee = unsafe Unmanaged.passRetained(state).toOpaque()
        server.inFlight.add(1, ordering: .relaxed)
        switch server.router.start(request) {
        case .respond(let response):
            state.finished = true
            state.status = response.status
            // A response queued on this first call makes libmicrohttpd close the connection afterwards (it
            // cannot know the body was consumed). Without a body, it waits for the next call and the
            // connection is kept alive; with one, closing is right: the body is not read.
            if request.hasBody { return unsafe queue(response, on: connection) }
            state.pending = response
            return .YES
        case .stream(let sink):
            state.sink = sink
            return .YES
        }
    }
    let state = unsafe Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
    let count = unsafe uploadDataSize.pointee
    if count > 0 {
        if let sink = state.sink, !state.finished, let data = unsafe uploadData {
            unsafe sink.receive(UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: count))
        }
        state.bytes += Int64(count)
        unsafe uploadDataSize.pointee = 0
        return .YES
    }
    if let pending = state.pending {
        state.pending = nil
        return unsafe queue(pending, on: connection)
    }
    guard !state.finished, let sink = state.sink else { return .YES }
    state.finished = true
    let response = sink.finish()
    state.status = response.status
    return unsafe queue(response, on: connection)
}

/// MHD_RequestCompletedCallback: the request is over; a body that never reached `finish` was cut short.
private func completedHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ termination: MHD_RequestTerminationCode
) {
    guard let cls = unsafe cls else { return }
    let server = unsafe Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    if let connection = unsafe connection {
        // The next header block on this connection is due within the header deadline from now.
        unsafe server.connectionGuard.requestEnded(
            connectionID(connection), timedOut: termination == .REQUEST_TERMINATED_TIMEOUT_REACHED)
    }
    guard let requestContext = unsafe requestContext, let pointer = unsafe requestContext.pointee else { return }
    unsafe requestContext.pointee = nil
    let state = unsafe Unmanaged<RequestState>.fromOpaque(pointer).takeRetainedValue()
    var status = state.status
    if let sink = state.sink, !state.finished {
        state.finished = true
        sink.interrupted()
        status = nil
    } else if termination != .REQUEST_TERMINATED_COMPLETED_OK {
        status = nil
    }
    let elapsed = ContinuousClock.now - state.started
    let nanoseconds =
        UInt64(max(0, elapsed.components.seconds)) * 1_000_000_000
        + UInt64(max(0, elapsed.components.attoseconds / 1_000_000_000))
    server.router.ended(state.request, status: status, bytesReceived: state.bytes, nanoseconds: nanoseconds)
    server.inFlight.subtract(1, ordering: .relaxed)
}

/// Builds the Swift request from the connection (MHD_get_connection_values, caether_mhd_client_address).
private func makeRequest(
    _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?
) -> HTTPServerRequest {
    let collector = HeaderCollector()
    let collectorPointer = unsafe Unmanaged.passUnretained(collector).toOpaque()
    // MHD_get_connection_values: every header line in order, duplicates included.
    _ = unsafe MHD_get_connection_values(
        connection, .HEADER_KIND,
        { cls, _, key, value in
            guard let cls = unsafe cls, let key = unsafe key else { return .YES }
            let collector = unsafe Unmanaged<HeaderCollector>.fromOpaque(cls).takeUnretainedValue()
            let name = unsafe String(cString: key)
            let text = unsafe value.map { unsafe String(cString: $0) } ?? ""
            collector.headers.append((name, text))
            return .YES
        }, collectorPointer)
    let (address, loopback) = unsafe clientAddress(connection)
    return HTTPServerRequest(
        method: unsafe method.map { unsafe String(cString: $0) } ?? "",
        path: unsafe url.map { unsafe String(cString: $0) } ?? "",
        headers: collector.headers, clientAddress: address, isLoopback: loopback)
}

/// The client's address as text and whether it is loopback.
private func clientAddress(_ connection: OpaquePointer) -> (String, Bool) {
    guard let address = unsafe caether_mhd_client_address(connection) else { return ("unknown", false) }
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    switch Int32(unsafe address.pointee.sa_family) {
    case AF_INET:
        return unsafe address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
            var raw = unsafe v4.pointee.sin_addr
            _ = unsafe inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count))
            let host = UInt32(bigEndian: raw.s_addr)
            return (
                String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                host >> 24 == 127
            )
        }
    case AF_INET6:
        return unsafe address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
            var raw = unsafe v6.pointee.sin6_addr
            _ = unsafe inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count))
            let bytes = unsafe withUnsafeBytes(of: &raw) { unsafe Array($0) }
            let loopback =
                bytes == [UInt8](repeating: 0, count: 15) + [1]
                || (bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] && bytes[12] == 127)
            return (
                String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                loopback
            )
        }
    default:
        return ("unknown", false)
    }
}

/// Queues `response` (MHD_create_response_from_buffer, MHD_add_response_header, MHD_queue_response).
private func queue(_ response: HTTPServerResponse, on connection: OpaquePointer) -> MHD_Result {
    var body = response.body
    let created = unsafe body.withUnsafeMutableBytes { raw in
        unsafe MHD_create_response_from_buffer(raw.count, raw.baseAddress, .RESPMEM_MUST_COPY)
    }
    guard let created = unsafe created else { return .NO }
    for (name, value) in response.headers {
        // A value with CR or LF is refused by libmicrohttpd (MHD_NO): the header is left out, never split.
        _ = unsafe MHD_add_response_header(created, name, value)
    }
    let result = unsafe MHD_queue_response(connection, UInt32(response.status), created)
    unsafe MHD_destroy_response(created)
    return result
}

/// An IPv4 or IPv6 socket address parsed from text (inet_pton).
private struct SocketAddress {
    private var storage: sockaddr_storage
    let isIPv6: Bool

    init?(_ text: String, port: UInt16) {
        var storage = sockaddr_storage()
        var v4 = sockaddr_in()
        if unsafe inet_pton(AF_INET, text, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            unsafe withUnsafeBytes(of: v4) { source in
                unsafe withUnsafeMutableBytes(of: &storage) { unsafe $0.copyMemory(from: source) }
            }
            self.storage = storage
            isIPv6 = false
            return
        }
        var v6 = sockaddr_in6()
        guard unsafe inet_pton(AF_INET6, text, &v6.sin6_addr) == 1 else { return nil }
        v6.sin6_family = sa_family_t(AF_INET6)
        v6.sin6_port = port.bigEndian
        unsafe withUnsafeBytes(of: v6) { source in
            unsafe withUnsafeMutableBytes(of: &storage) { unsafe $0.copyMemory(from: source) }
        }
        self.storage = storage
        isIPv6 = true
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        var copy = storage
        return unsafe withUnsafePointer(to: &copy) { pointer in
            unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { unsafe body($0) }
        }
    }
}

extension Optional where Wrapped == String {
    /// Calls `body` with a C string, or with nil.
    fileprivate func withOptionalCString<T>(_ body: (UnsafePointer<CChar>?) -> T) -> T {
        switch self {
        case .some(let text): return unsafe text.withCString { unsafe body($0) }
        case .none: return body(nil)
        }
    }
}
