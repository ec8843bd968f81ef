public import AetherScheduling
public import AetherTransport
import Synchronization

/// How often the path to the destination is interrupted (requests cut by a reset, refused, or timed out), and how
/// long a round trip takes: what the link planner needs besides the rate. The interruptions are an
/// `InterruptionHistory` (failures less than `burstGap` seconds apart are one interruption; only the last `window`
/// seconds count) on this log's own clock, from its start.
public final class InterruptionLog: Sendable {
    /// Failures closer than this to the previous one count as the same interruption.
    public var burstGap: Double { state.withLock { $0.history.burstGap } }
    /// Seconds of history the forecast is made from.
    public var window: Double { state.withLock { $0.history.window } }
    private let started: ContinuousClock.Instant
    private let state: Mutex<Entries>

    private struct Entries {
        var history: InterruptionHistory
        var roundTrip: Double?
        var congestionControl: String?
    }

    /// A log started now.
    public init(burstGap: Double = 2, window: Double = 300) {
        state = Mutex(Entries(history: InterruptionHistory(burstGap: burstGap, window: window)))
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
        state.withLock { $0.history.note(at: time) }
    }

    /// Mean seconds between interruptions over the last `window` seconds (or since the log started), at `seconds`
    /// since it started (now when nil); nil when there was none in that time.
    public func meanInterval(at seconds: Double? = nil) -> Double? {
        let time = seconds ?? elapsed
        return state.withLock { $0.history.meanInterval(at: time) }
    }

    /// When the next interruption is expected, at `seconds` since the log started (now when nil); nil when there
    /// was none in the window.
    public func forecast(at seconds: Double? = nil) -> InterruptionForecast? {
        let time = seconds ?? elapsed
        return state.withLock { $0.history.forecast(at: time) }
    }

    /// Notes the TCP handshake of a new connection: one round trip. The estimate follows the recent ones (an EWMA
    /// of weight 1/4), so a path change that lengthens it is seen within a few connections.
    /// `congestionControl` is the connection's TCP congestion control, when the system said.
    public func noteHandshake(seconds: Double, congestionControl: String? = nil) {
        state.withLock { entries in
            if let congestionControl { entries.congestionControl = congestionControl }
            guard seconds.isFinite, seconds > 0, seconds < 60 else { return }
            entries.roundTrip = entries.roundTrip.map { $0 * 0.75 + seconds * 0.25 } ?? seconds
        }
    }

    /// The TCP congestion control of the newest connection, nil before the system said.
    public var congestionControl: String? { state.withLock { $0.congestionControl } }

    /// The round trip to the destination in seconds, from the handshakes seen; nil before the first.
    public var roundTripTime: Double? { state.withLock { $0.roundTrip } }

    private var elapsed: Double { started.duration(to: .now) / .seconds(1) }
}
