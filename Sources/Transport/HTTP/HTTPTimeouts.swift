/// The limits of one request in time. libcurl enforces `connect`, `idle` and `total` on the client's thread; the
/// client's own loop enforces the answer's deadlines (`firstByte`, `answer`, `minimumAnswerBytesPerSecond`), which
/// count from the moment the request, body included, has left this host, so a large upload body never eats into
/// the time its answer is given.
public struct HTTPTimeouts: Sendable, Equatable {
    /// From the start until the TCP (and TLS) connection is up, DNS included.
    public var connect: Duration
    /// Longest stretch during which fewer than one byte per second moves in either direction; libcurl counts it in
    /// whole seconds, so it is rounded up. nil: no idle limit.
    public var idle: Duration?
    /// The whole exchange, from the start to the last byte of the response. nil: no limit.
    public var total: Duration?
    /// Longest wait for the first byte of the answer (a status line, 1xx included) once the request has been
    /// sent: its body handed to libcurl and the socket's send queue empty. nil: no limit.
    public var firstByte: Duration?
    /// Longest time, from the same moment, until the final answer's head has ended (however many 1xx answers
    /// come before it) and, extended by `minimumAnswerBytesPerSecond` for the body, until the body has ended:
    /// a server that drips its answer a byte at a time fails here instead of holding the request for days.
    /// nil: no limit.
    public var answer: Duration?
    /// The lowest rate the answer's body is given time for: the `answer` deadline grows by the body's
    /// `Content-Length` (or, without one, the request's response body limit) divided by this rate.
    public var minimumAnswerBytesPerSecond: Int

    /// Limits; the defaults suit an upload chunk on a slow link (10 s to connect, 30 s idle, no total limit; the
    /// answer's first byte within 30 s and its head within 60 s after the request was sent, its body at 4 KiB/s).
    public init(
        connect: Duration = .seconds(10), idle: Duration? = .seconds(30), total: Duration? = nil,
        firstByte: Duration? = .seconds(30), answer: Duration? = .seconds(60), minimumAnswerBytesPerSecond: Int = 4096
    ) {
        self.connect = connect
        self.idle = idle
        self.total = total
        self.firstByte = firstByte
        self.answer = answer
        self.minimumAnswerBytesPerSecond = max(1, minimumAnswerBytesPerSecond)
    }

    /// These limits with the answer's deadlines no shorter than `wait` (and the idle limit too): for a request
    /// whose answer waits for the server to do slow work first (read an object back).
    public func allowingSilence(_ wait: Duration) -> HTTPTimeouts {
        var longer = self
        if let idle { longer.idle = max(idle, wait) }
        if let firstByte { longer.firstByte = max(firstByte, wait) }
        if let answer { longer.answer = answer + wait }
        return longer
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

    /// Seconds as a Double (for the deadline arithmetic on monotonic seconds).
    static func interval(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
