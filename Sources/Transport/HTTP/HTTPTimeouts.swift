/// The limits of one request in time. libcurl enforces them on the client's thread.
public struct HTTPTimeouts: Sendable, Equatable {
    /// From the start until the TCP (and TLS) connection is up, DNS included.
    public var connect: Duration
    /// Longest stretch during which fewer than one byte per second moves in either direction; libcurl counts it in
    /// whole seconds, so it is rounded up. nil: no idle limit.
    public var idle: Duration?
    /// The whole exchange, from the start to the last byte of the response. nil: no limit.
    public var total: Duration?

    /// Limits; the defaults suit an upload chunk on a slow link (10 s to connect, 30 s idle, no total limit).
    public init(connect: Duration = .seconds(10), idle: Duration? = .seconds(30), total: Duration? = nil) {
        self.connect = connect
        self.idle = idle
        self.total = total
    }

    /// Milliseconds, rounded up, at least 1.
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 1 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return Int.max }
        let part = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return max(1, Int(clamping: whole + part))
    }

    /// Whole seconds, rounded up, at least 1.
    static func seconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 1 }
        return max(1, Int(clamping: seconds + (attoseconds > 0 ? 1 : 0)))
    }
}
