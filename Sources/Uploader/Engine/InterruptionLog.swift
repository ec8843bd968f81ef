public import AetherTransport
import Synchronization

/// How often the path to the destination is interrupted: requests cut by a reset, refused, or timed out. Failures
/// less than `burstGap` seconds after the previous one belong to the same interruption (a reset cuts every request
/// in flight at once, and their retries fail again while the link is down). The mean interval is measured over the
/// last `window` seconds, so a link that settles down stops being treated as interrupted.
public final class InterruptionLog: Sendable {
    /// Failures closer than this to the previous one count as the same interruption.
    public let burstGap: Double
    /// Seconds of history the mean interval is measured over.
    public let window: Double
    private let started: ContinuousClock.Instant
    private let state = Mutex(Entries())

    private struct Entries {
        var starts: [Double] = []
        var lastFailure: Double?
    }

    /// A log started now.
    public init(burstGap: Double = 2, window: Double = 300) {
        self.burstGap = burstGap
        self.window = window
        started = .now
    }

    /// Whether `code` interrupts the path rather than being the destination's answer.
    public static func interrupts(_ code: TransportError.Code) -> Bool {
        [.connectionClosed, .connectionRefused, .timedOut, .notConnected].contains(code)
    }

    /// Notes a failed request at `seconds` since the log started (now when nil), if `code` interrupts the path.
    public func note(_ code: TransportError.Code, at seconds: Double? = nil) {
        guard Self.interrupts(code) else { return }
        let time = seconds ?? elapsed
        state.withLock { entries in
            defer { entries.lastFailure = max(entries.lastFailure ?? time, time) }
            if let last = entries.lastFailure, time - last < burstGap { return }
            entries.starts.append(time)
            entries.starts.removeAll { $0 < time - window }
        }
    }

    /// Mean seconds between interruptions over the last `window` seconds (or since the log started), at `seconds`
    /// since it started (now when nil); nil when there was none in that time.
    public func meanInterval(at seconds: Double? = nil) -> Double? {
        let time = seconds ?? elapsed
        let from = max(0, time - window)
        let count = state.withLock { entries in entries.starts.count { $0 >= from && $0 <= time } }
        guard count > 0 else { return nil }
        return max(time - from, burstGap) / Double(count)
    }

    private var elapsed: Double { started.duration(to: .now) / .seconds(1) }
}
