import AetherIO
import AetherSecurity
import CAetherCurl
import Glibc

// Every libcurl call of AetherTransport lives in this file. Handles are owned by two small classes: `CurlMulti`
// (one per client, used on the client's thread) and `CurlEasy` (one per transfer). The C callbacks find their
// transfer through an unretained pointer: the event loop keeps the transfer alive while its handle is in the multi.

/// libcurl facts and process-wide set-up.
enum Curl {
    /// curl_global_init(CURL_GLOBAL_ALL), once per process before the first handle (a Swift static is initialised
    /// once, thread-safely).
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    /// curl_version_info(CURLVERSION_TENTH, what CURLVERSION_NOW is in 7.88): libcurl's version string and whether it was built with HTTP/2 (nghttp2).
    static let version: (text: String, http2: Bool) = {
        guard let info = unsafe curl_version_info(CURLVERSION_TENTH) else { return ("unknown", false) }
        let text = unsafe info.pointee.version.map { unsafe String(cString: $0) } ?? "unknown"
        return (text, unsafe info.pointee.features & CURL_VERSION_HTTP2 != 0)
    }()
}

/// A libcurl result code, carried out of this file without its C type.
struct CurlCode {
    fileprivate let code: CURLcode
}

/// One libcurl multi handle: the connection cache, the DNS cache and the event loop's wait.
@safe final class CurlMulti: @unchecked Sendable {
    // @unchecked: used only on the client's thread, except `wakeup` (curl_multi_wakeup is thread-safe).
    private let handle: UnsafeMutableRawPointer
    private var closed = false

    /// curl_multi_init, curl_multi_setopt(CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX): HTTP/2 streams share a
    /// connection.
    init() throws(TransportError) {
        guard Curl.initialized else { throw TransportError(.systemCall, "curl_global_init failed") }
        guard let multi = unsafe curl_multi_init() else { throw TransportError(.systemCall, "curl_multi_init failed") }
        unsafe handle = multi
        _ = unsafe caether_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
    }

    /// curl_multi_wakeup: ends a curl_multi_poll now (from any thread).
    func wakeup() {
        _ = unsafe curl_multi_wakeup(handle)
    }

    /// curl_multi_add_handle.
    func add(_ easy: CurlEasy) throws(TransportError) {
        let result = unsafe curl_multi_add_handle(handle, easy.handle)
        guard result == CURLM_OK else {
            let text = unsafe curl_multi_strerror(result).map { unsafe String(cString: $0) } ?? "unknown"
            throw TransportError(.systemCall, "curl_multi_add_handle: \(text)")
        }
    }

    /// curl_multi_remove_handle: stops the transfer now; a half-used connection is closed, not reused.
    func remove(_ easy: CurlEasy) {
        _ = unsafe curl_multi_remove_handle(handle, easy.handle)
    }

    /// curl_multi_perform: moves every transfer as far as it can go without waiting.
    func perform() {
        var running: Int32 = 0
        _ = unsafe curl_multi_perform(handle, &running)
    }

    /// curl_multi_info_read: the next finished transfer (its handle's key and result), if any.
    func nextDone() -> (handle: Int, code: CurlCode)? {
        var left: Int32 = 0
        while let message = unsafe curl_multi_info_read(handle, &left) {
            guard unsafe message.pointee.msg == CURLMSG_DONE, let easy = unsafe message.pointee.easy_handle else {
                continue
            }
            return unsafe (Int(bitPattern: easy), CurlCode(code: message.pointee.data.result))
        }
        return nil
    }

    /// curl_multi_poll: waits for socket activity, libcurl's next timer, a wakeup, or `milliseconds`.
    func poll(milliseconds: Int32) {
        _ = unsafe curl_multi_poll(handle, nil, 0, milliseconds, nil)
    }

    /// curl_multi_cleanup: closes the cached connections. Every easy handle must have been removed.
    func close() {
        guard !closed else { return }
        closed = true
        _ = unsafe curl_multi_cleanup(handle)
    }

    deinit { close() }
}

/// One libcurl easy handle, configured for one request.
@safe final class CurlEasy {
    fileprivate let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The congestion control's name for the socket-option callback (nil: the system's), owned by this handle.
    private var congestionName: UnsafeMutablePointer<CChar>?

    /// The key the multi handle reports it under.
    var key: Int { unsafe Int(bitPattern: handle) }

    /// curl_easy_init and curl_easy_setopt for everything the request and the configuration say.
    init(transfer: HTTPTransfer, configuration: HTTPClientConfiguration) throws(TransportError) {
        guard let easy = unsafe curl_easy_init() else { throw TransportError(.systemCall, "curl_easy_init failed") }
        unsafe handle = easy
        unsafe errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        unsafe errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        try configure(transfer: transfer, configuration: configuration)
    }

    deinit {
        unsafe curl_easy_cleanup(handle)
        if let headerList = unsafe headerList { unsafe curl_slist_free_all(headerList) }
        unsafe errorBuffer.deallocate()
        if let congestionName = unsafe congestionName { unsafe free(congestionName) }
    }

    /// curl_easy_pause(CURLPAUSE_CONT): the body source has bytes again.
    func unpause() {
        _ = unsafe curl_easy_pause(handle, CURLPAUSE_CONT)
    }

    // MARK: Options

    /// Reuses no cached connection that is `seconds` old or older (`CURLOPT_MAXLIFETIME_CONN`).
    func reuseOnlyConnectionsYoungerThan(seconds: Int) throws(TransportError) {
        try set(CURLOPT_MAXLIFETIME_CONN, seconds)
    }

    private func set(_ option: CURLoption, _ value: Int) throws(TransportError) {
        try check(unsafe caether_curl_setopt_long(handle, option, value), option)
    }

    private func set(_ option: CURLoption, _ value: String) throws(TransportError) {
        // libcurl copies string options.
        try check(unsafe caether_curl_setopt_string(handle, option, value), option)
    }

    private func check(_ result: CURLcode, _ option: CURLoption) throws(TransportError) {
        guard result == CURLE_OK else {
            let text = unsafe curl_easy_strerror(result).map { unsafe String(cString: $0) } ?? "unknown"
            throw TransportError(.invalidArgument, "libcurl refused option \(option.rawValue): \(text)")
        }
    }

    private func configure(transfer: HTTPTransfer, configuration: HTTPClientConfiguration) throws(TransportError) {
        let request = transfer.request
        let context = unsafe Unmanaged.passUnretained(transfer).toOpaque()
        try set(CURLOPT_NOSIGNAL, 1)
        try check(unsafe caether_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), CURLOPT_ERRORBUFFER)
        try set(CURLOPT_URL, request.url)
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_FOLLOWLOCATION, 0)
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        if let name = configuration.congestionControl, let copy = unsafe strdup(name) {
            unsafe congestionName = copy
            try check(
                unsafe caether_curl_setopt_sockopt_function(handle, Curl.chooseCongestionControl),
                CURLOPT_SOCKOPTFUNCTION)
            try check(unsafe caether_curl_setopt_pointer(handle, CURLOPT_SOCKOPTDATA, copy), CURLOPT_SOCKOPTDATA)
        }
        try set(CURLOPT_MAXAGE_CONN, configuration.idleReuseLimit)
        try set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        if !request.headers.contains("User-Agent") { try set(CURLOPT_USERAGENT, configuration.userAgent) }

        switch request.version {
        case .http1: try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        case .automatic:
            try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            // Only where ALPN may give HTTP/2: on plain HTTP/1.1, libcurl 7.88 would make the request wait for a
            // busy connection's answer instead of opening another, serialising parallel requests.
            if request.isTLS { try set(CURLOPT_PIPEWAIT, 1) }
        case .http2 where request.isTLS:
            try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_0))
            try set(CURLOPT_PIPEWAIT, 1)  // wait for a connection being set up rather than open another
        case .http2:
            // h2c with prior knowledge. libcurl 7.88.1 fails any second request on such a connection (CURLE_HTTP2,
            // "Error in the HTTP2 framing layer", serial or multiplexed), so each h2c request gets its own.
            try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE))
            try set(CURLOPT_FRESH_CONNECT, 1)
            try set(CURLOPT_FORBID_REUSE, 1)
        }

        // TLS: at least 1.2, peer and host verified, always.
        try set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        if let anchors = configuration.trustAnchorsFile { try set(CURLOPT_CAINFO, anchors) }
        if let pinning = configuration.pinning {
            let manager = unsafe Unmanaged.passUnretained(pinning).toOpaque()
            try check(
                unsafe caether_curl_setopt_ssl_ctx_function(handle, Curl.installPins), CURLOPT_SSL_CTX_FUNCTION)
            try check(unsafe caether_curl_setopt_pointer(handle, CURLOPT_SSL_CTX_DATA, manager), CURLOPT_SSL_CTX_DATA)
            // A resumed session skips certificate verification: every pinned connection does a full handshake.
            try set(CURLOPT_SSL_SESSIONID_CACHE, 0)
        }

        switch configuration.proxy {
        case .environment: break
        case .none: try set(CURLOPT_PROXY, "")
        case .url(let proxy): try set(CURLOPT_PROXY, proxy)
        }

        try set(CURLOPT_CONNECTTIMEOUT_MS, HTTPTimeouts.milliseconds(request.timeouts.connect))
        if let total = request.timeouts.total { try set(CURLOPT_TIMEOUT_MS, HTTPTimeouts.milliseconds(total)) }
        if let idle = request.timeouts.idle {
            try set(CURLOPT_LOW_SPEED_LIMIT, 1)
            try set(CURLOPT_LOW_SPEED_TIME, HTTPTimeouts.seconds(idle))
        }

        // Headers: the caller's, then "Expect:" (empty), which turns off libcurl's Expect: 100-continue.
        var list: UnsafeMutablePointer<curl_slist>?
        for field in request.headers where !HTTPHeaders.equalNames(field.name, "Expect") {
            // "Name;" is libcurl's way to send a field with an empty value ("Name:" would remove it).
            let line = field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
            guard let appended = unsafe curl_slist_append(list, line) else {
                if let list = unsafe list { unsafe curl_slist_free_all(list) }
                throw TransportError(.systemCall, "curl_slist_append failed")
            }
            unsafe list = appended
        }
        guard let withExpect = unsafe curl_slist_append(list, "Expect:") else {
            if let list = unsafe list { unsafe curl_slist_free_all(list) }
            throw TransportError(.systemCall, "curl_slist_append failed")
        }
        unsafe headerList = withExpect
        try check(unsafe caether_curl_setopt_list(handle, CURLOPT_HTTPHEADER, withExpect), CURLOPT_HTTPHEADER)

        try check(
            unsafe caether_curl_setopt_write_function(handle, CURLOPT_HEADERFUNCTION, Curl.headerLine),
            CURLOPT_HEADERFUNCTION)
        try check(unsafe caether_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context), CURLOPT_HEADERDATA)
        try check(
            unsafe caether_curl_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, Curl.bodyBytes),
            CURLOPT_WRITEFUNCTION)
        try check(unsafe caether_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context), CURLOPT_WRITEDATA)

        let method = request.method
        if request.sendsBody {
            try set(CURLOPT_UPLOAD, 1)
            try check(unsafe caether_curl_setopt_read_function(handle, Curl.readBody), CURLOPT_READFUNCTION)
            try check(unsafe caether_curl_setopt_pointer(handle, CURLOPT_READDATA, context), CURLOPT_READDATA)
            try check(
                unsafe caether_curl_setopt_offset(
                    handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.body.length ?? -1)),
                CURLOPT_INFILESIZE_LARGE)
            try set(CURLOPT_UPLOAD_BUFFERSIZE, configuration.uploadBufferSize)
            try check(
                unsafe caether_curl_setopt_offset(
                    handle, CURLOPT_MAX_SEND_SPEED_LARGE, curl_off_t(configuration.maximumSendBytesPerSecond ?? 0)),
                CURLOPT_MAX_SEND_SPEED_LARGE)
            if method != "PUT" { try set(CURLOPT_CUSTOMREQUEST, method) }
        } else if method == "HEAD" {
            try set(CURLOPT_NOBODY, 1)
        } else if method == "GET" {
            try set(CURLOPT_HTTPGET, 1)
        } else {
            try set(CURLOPT_CUSTOMREQUEST, method)
        }
        if let target = request.requestTarget { try set(CURLOPT_REQUEST_TARGET, target) }
    }

    // MARK: Results

    private func info(_ item: CURLINFO) -> Int {
        var value = 0
        _ = unsafe caether_curl_getinfo_long(handle, item, &value)
        return value
    }

    /// Whether libcurl has begun sending the request (connected, TLS done): CURLINFO_PRETRANSFER_TIME_T is set.
    var requestStarted: Bool { offset(CURLINFO_PRETRANSFER_TIME_T) > 0 }

    /// Whether bytes still wait in the send queue of the transfer's socket (CURLINFO_ACTIVESOCKET, then
    /// ioctl(TIOCOUTQ), the same request as SIOCOUTQ on a TCP socket): a request body handed to libcurl may sit
    /// there for a long time on a slow link. False when there is no socket or the kernel does not say.
    var hasQueuedBytes: Bool {
        var socket: curl_socket_t = CURL_SOCKET_BAD
        guard unsafe caether_curl_getinfo_socket(handle, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK,
            socket != CURL_SOCKET_BAD
        else { return false }
        var queued: Int32 = 0
        guard unsafe ioctl(socket, UInt(TIOCOUTQ), &queued) == 0 else { return false }
        return queued > 0
    }

    private func offset(_ item: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = unsafe caether_curl_getinfo_offset(handle, item, &value)
        return Int64(value)
    }

    /// curl_easy_getinfo: the telemetry of the finished (or failed) transfer.
    func telemetry() -> HTTPTelemetry {
        let version: HTTPProtocolVersion =
            switch info(CURLINFO_HTTP_VERSION) {
            case Int(CURL_HTTP_VERSION_1_0), Int(CURL_HTTP_VERSION_1_1): .http1
            case Int(CURL_HTTP_VERSION_2_0): .http2
            case Int(CURL_HTTP_VERSION_3): .http3
            default: .unknown
            }
        return HTTPTelemetry(
            protocolVersion: version, nameLookupMicros: offset(CURLINFO_NAMELOOKUP_TIME_T),
            connectMicros: offset(CURLINFO_CONNECT_TIME_T), tlsMicros: offset(CURLINFO_APPCONNECT_TIME_T),
            firstByteMicros: offset(CURLINFO_STARTTRANSFER_TIME_T), totalMicros: offset(CURLINFO_TOTAL_TIME_T),
            bytesSent: offset(CURLINFO_SIZE_UPLOAD_T), bytesReceived: offset(CURLINFO_SIZE_DOWNLOAD_T),
            headerBytesReceived: Int64(info(CURLINFO_HEADER_SIZE)), newConnections: info(CURLINFO_NUM_CONNECTS),
            congestionControl: congestionControl)
    }

    /// The congestion control of the transfer's socket (CURLINFO_ACTIVESOCKET, then getsockopt(TCP_CONGESTION)),
    /// nil when there is no socket or the kernel does not say.
    private var congestionControl: String? {
        var socket: curl_socket_t = CURL_SOCKET_BAD
        guard unsafe caether_curl_getinfo_socket(handle, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK,
            socket != CURL_SOCKET_BAD
        else { return nil }
        var name = [CChar](repeating: 0, count: 16)
        var length = socklen_t(name.count)
        let result = unsafe name.withUnsafeMutableBytes { raw in
            unsafe getsockopt(socket, Int32(IPPROTO_TCP), TCP_CONGESTION, raw.baseAddress, &length)
        }
        guard result == 0 else { return nil }
        let bytes = name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// The response, or the typed error for libcurl's result (a callback's own reason first).
    func outcome(code wrapped: CurlCode, transfer: HTTPTransfer) -> Result<HTTPResponse, TransportError> {
        let code = wrapped.code
        if code == CURLE_OK {
            guard let head = transfer.parser.head else {
                return .failure(TransportError(.protocolViolation, "the response ended without a complete header"))
            }
            return .success(
                HTTPResponse(
                    status: head.status, headers: head.headers, informational: transfer.parser.informational,
                    body: transfer.responseBody, telemetry: telemetry()))
        }
        if let failure = transfer.failure { return .failure(failure) }
        // RFC 9113 section 8.1: a server may send a complete response before it has read the whole request and
        // then reset the stream with NO_ERROR (nginx does for a `return` that ignores the body). libcurl 7.88
        // reports any reset as CURLE_HTTP2_STREAM (or CURLE_PARTIAL_FILE when the server closes the connection
        // instead) and cannot say which code came, so a complete response (its head ended and its body as long as
        // Content-Length says, or a status without a body) counts as the answer.
        if code == CURLE_HTTP2_STREAM || code == CURLE_PARTIAL_FILE, let head = transfer.parser.head,
            Self.bodyIsComplete(status: head.status, headers: head.headers, received: transfer.responseBody.count)
        {
            return .success(
                HTTPResponse(
                    status: head.status, headers: head.headers, informational: transfer.parser.informational,
                    body: transfer.responseBody, telemetry: telemetry()))
        }
        return .failure(error(code, headComplete: transfer.parser.head != nil))
    }

    /// EMFILE or ENFILE when this process cannot open one more descriptor now, else 0.
    private static func descriptorShortage() -> Int32 {
        let probe = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0)
        guard probe < 0 else {
            close(probe)
            return 0
        }
        return errno
    }

    /// True when a response's body is all there: 1xx, 204 and 304 have none; otherwise Content-Length must be
    /// present and met (without it, a reset stream leaves the end unknown).
    static func bodyIsComplete(status: Int, headers: HTTPHeaders, received: Int) -> Bool {
        if status == 204 || status == 304 { return received == 0 }
        guard let declared = headers["Content-Length"], let length = Int(declared) else { return false }
        return length == received
    }

    /// Whether a failed connect came after a reset of the connection the request was already going out on: libcurl
    /// keeps the first error of a transfer in its error buffer, so a connect failure whose detail is a receive or
    /// send failure is libcurl's retry on a fresh connection after a reused one was reset under the request (seen on
    /// the link lab: 0.9 MB of a 1 MiB body had reached the receiver). The body may have left in part, so this is a
    /// closed connection, not a refused one: a refusal means nothing was sent and the next attempt would not ask the
    /// destination what it holds.
    static func connectFollowedAReset(detail: String) -> Bool {
        detail.hasPrefix("Recv failure") || detail.hasPrefix("Send failure")
    }

    /// Maps a libcurl error to a TransportError code; the message carries libcurl's own detail.
    private func error(_ code: CURLcode, headComplete: Bool) -> TransportError {
        let detail = unsafe errorBuffer.pointee != 0 ? unsafe String(cString: errorBuffer) : ""
        let text = unsafe curl_easy_strerror(code).map { unsafe String(cString: $0) } ?? "libcurl error"
        let message = detail.isEmpty ? text : "\(text): \(detail)"
        // OpenSSL's X509_V_ERR_APPLICATION_VERIFICATION (x509_vfy.h): what the pin check sets on a mismatch.
        let applicationVerification = 50
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: return TransportError(.invalidArgument, message)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return TransportError(.hostNotFound, message)
        case CURLE_COULDNT_CONNECT:
            // No descriptor for the socket is this process's limit, not the server refusing. libcurl 7.88 keeps no
            // errno when socket(2) itself fails, so a descriptor is asked for here to tell the two apart.
            var local = Int32(truncatingIfNeeded: info(CURLINFO_OS_ERRNO))
            if local == 0 { local = Self.descriptorShortage() }
            if local == EMFILE || local == ENFILE {
                let reason = unsafe String(cString: strerror(local))
                return TransportError(.systemCall, "no socket could be made: \(reason)", errno: local)
            }
            if Self.connectFollowedAReset(detail: detail) {
                return TransportError(
                    .connectionClosed, "the connection was reset and could not be made again: \(message)")
            }
            return TransportError(.connectionRefused, message)
        case CURLE_OPERATION_TIMEDOUT:
            // libcurl's low-speed limit: nothing moved either way (a connection that stalled without closing).
            if detail.contains("too slow") {
                return TransportError(.timedOut, "the connection stalled: no bytes moved (\(message))")
            }
            return TransportError(.timedOut, message)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR:
            let verify = info(CURLINFO_SSL_VERIFYRESULT)
            if verify == applicationVerification { return TransportError(.pinMismatch, message) }
            if code == CURLE_PEER_FAILED_VERIFICATION || verify != 0 {
                return TransportError(.certificateRejected, message)
            }
            return TransportError(.tlsHandshakeFailed, message)
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE:
            return TransportError(.tlsHandshakeFailed, message)
        case CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_HTTP2_STREAM,
            // A reused connection closed under a request body: libcurl would re-send it, but cannot rewind the body.
            CURLE_SEND_FAIL_REWIND:
            if detail.lowercased().contains("too large") || detail.lowercased().contains("too long") {
                return TransportError(.headerTooLarge, message)
            }
            return TransportError(.connectionClosed, message)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_BAD_CONTENT_ENCODING:
            return TransportError(.protocolViolation, message)
        case CURLE_OUT_OF_MEMORY where !headComplete:
            // libcurl 7.88 reports a header line over its 100 KiB line buffer (CURL_MAX_HTTP_HEADER) this way.
            return TransportError(.headerTooLarge, "a response header line exceeds libcurl's limit (\(message))")
        case CURLE_ABORTED_BY_CALLBACK, CURLE_READ_ERROR:
            return TransportError(.bodySourceFailed, message)
        default:
            return TransportError(.systemCall, message)
        }
    }
}

extension Curl {
    /// CURLOPT_READFUNCTION: copies the next body bytes straight from the caller's array or chunk buffer into
    /// libcurl's upload buffer. Returns CURL_READFUNC_PAUSE when a stream has nothing yet (the loop unpauses on
    /// the next write), 0 at the end, CURL_READFUNC_ABORT when the source failed.
    static let readBody: curl_read_callback = { buffer, size, count, userdata in
        guard let buffer = unsafe buffer, let userdata = unsafe userdata else { return Int(CURL_READFUNC_ABORT) }
        let transfer = unsafe Unmanaged<HTTPTransfer>.fromOpaque(userdata).takeUnretainedValue()
        let capacity = size * count
        let destination = UnsafeMutableRawPointer(buffer)
        var written = 0
        while written < capacity {
            switch transfer.nextBodyRegion() {
            case .bytes(let piece, let offset):
                let length = min(piece.count - offset, capacity - written)
                switch piece {
                case .bytes(let bytes):
                    unsafe bytes.withUnsafeBytes { source in
                        guard let base = source.baseAddress else { return }  // empty: length is 0
                        unsafe (destination + written).copyMemory(from: base + offset, byteCount: length)
                    }
                case .chunk(let chunk):
                    unsafe chunk.withUnsafeBytes { source in
                        guard let base = source.baseAddress else { return }  // empty: length is 0
                        unsafe (destination + written).copyMemory(from: base + offset, byteCount: length)
                    }
                }
                transfer.advanceBody(by: length)
                written += length
            case .pause: return written > 0 ? written : Int(CURL_READFUNC_PAUSE)
            case .end: return written
            case .abort: return written > 0 ? written : Int(CURL_READFUNC_ABORT)
            }
        }
        return written
    }

    /// CURLOPT_HEADERFUNCTION: one header line (status lines, fields and the empty line of every block, 1xx
    /// included). Returning anything but the line's length stops the transfer (CURLE_WRITE_ERROR).
    static let headerLine: curl_write_callback = { data, size, count, userdata in
        guard let data = unsafe data, let userdata = unsafe userdata else { return 0 }
        let transfer = unsafe Unmanaged<HTTPTransfer>.fromOpaque(userdata).takeUnretainedValue()
        let length = size * count
        let line = unsafe Array(UnsafeRawBufferPointer(start: data, count: length))
        return transfer.receiveHeader(line) ? length : 0
    }

    /// CURLOPT_WRITEFUNCTION: response body bytes, kept up to the request's limit.
    static let bodyBytes: curl_write_callback = { data, size, count, userdata in
        guard let data = unsafe data, let userdata = unsafe userdata else { return 0 }
        let transfer = unsafe Unmanaged<HTTPTransfer>.fromOpaque(userdata).takeUnretainedValue()
        let length = size * count
        guard transfer.acceptsBody(count: length) else { return 0 }
        unsafe transfer.responseBody.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
        return length
    }

    /// CURLOPT_SOCKOPTFUNCTION: setsockopt(TCP_CONGESTION) with the name in `userdata` on each new TCP connection.
    /// A refusal (the control not available or not allowed) leaves the system's default: never a failed request.
    static let chooseCongestionControl: curl_sockopt_callback = { userdata, socket, purpose in
        guard purpose == CURLSOCKTYPE_IPCXN, let name = unsafe userdata?.assumingMemoryBound(to: CChar.self) else {
            return Int32(CURL_SOCKOPT_OK)
        }
        _ = unsafe setsockopt(socket, Int32(IPPROTO_TCP), TCP_CONGESTION, name, socklen_t(strlen(name)))
        return Int32(CURL_SOCKOPT_OK)
    }

    /// CURLOPT_SSL_CTX_FUNCTION: installs the pin manager's verification on the new connection's SSL_CTX (after
    /// libcurl loaded the trust anchors). A failure aborts the connection: pinning fails closed.
    static let installPins: curl_ssl_ctx_callback = { _, context, userdata in
        guard let context = unsafe context, let userdata = unsafe userdata else { return CURLE_ABORTED_BY_CALLBACK }
        let manager = unsafe Unmanaged<CertificatePinManager>.fromOpaque(userdata).takeUnretainedValue()
        do {
            try unsafe manager.installPinning(onSSLContext: OpaquePointer(context))
            return CURLE_OK
        } catch {
            return CURLE_ABORTED_BY_CALLBACK
        }
    }
}
