public import AetherIO

/// How the IETF resumable upload backend talks to its server.
public struct IETFBackendOptions: Sendable {
    /// Extra header fields on every request (e.g. `Authorization`); never logged.
    public var headers: HTTPHeaders
    /// The method of the creation request (`POST` by default; the drafts allow any method with content).
    public var creationMethod: String
    /// The largest append this client sends, whatever the server allows.
    public var maximumPartSize: Int64
    /// Which HTTP version to ask for.
    public var version: HTTPVersionPreference
    /// Time limits of every request.
    public var timeouts: HTTPTimeouts
    /// How many times one append is re-sent from the server's offset after a 409 or a 5xx before giving up.
    public var recoveryAttempts: Int
    /// The clock whose wall reading dates `max-age`/`expires` (a `ManualClock` in tests).
    public var clock: any AetherClock
    /// How long appends refused with 409 at the server's own offset are sent again, with back-off, while the server
    /// still holds an earlier append (this client's own, on a connection that stalled without closing) before the
    /// upload fails with `.conflict` saying so.
    public var heldAppendWait: Duration = .seconds(120)

    /// Options; the defaults suit a server without its own limits.
    public init(
        headers: HTTPHeaders = HTTPHeaders(), creationMethod: String = "POST", maximumPartSize: Int64 = 64 << 20,
        version: HTTPVersionPreference = .automatic, timeouts: HTTPTimeouts = HTTPTimeouts(), recoveryAttempts: Int = 3,
        clock: any AetherClock = SystemClock()
    ) {
        self.headers = headers
        self.creationMethod = creationMethod
        self.maximumPartSize = maximumPartSize
        self.version = version
        self.timeouts = timeouts
        self.recoveryAttempts = recoveryAttempts
        self.clock = clock
    }
}
