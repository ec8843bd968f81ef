/// The upload circuit breaker as a pure state machine (time passed in by the caller).
///
/// - closed: requests flow; outcomes go into a sliding window of the last `windowSize` requests (and no older than
///   `windowSeconds`). Once at least `minimumRequests` are in the window and the failure rate reaches
///   `failureRateThreshold`, the breaker opens.
/// - open: every request is refused until `coolDown` seconds have passed; then the next request is let through as
///   the single probe and the breaker is half-open.
/// - half-open: only the probe is in flight, other requests are refused; its success closes the breaker (window
///   cleared), its failure reopens it for another cool-down.
/// - rapid reset: `rapidResetThreshold` stream resets (HTTP/2 RST_STREAM) within `rapidResetWindow` seconds open the
///   breaker whatever the failure rate (the pattern of CVE-2023-44487).
public struct CircuitBreakerStateMachine: Sendable, Equatable {
    /// Tunables.
    public struct Configuration: Sendable, Equatable {
        /// Outcomes kept in the window.
        public var windowSize = 20
        /// Outcomes older than this are dropped from the window.
        public var windowSeconds = 60.0
        /// Outcomes needed before the rate is judged.
        public var minimumRequests = 5
        /// Failure rate that opens the breaker.
        public var failureRateThreshold = 0.5
        /// Seconds the breaker stays open before a probe.
        public var coolDown = 30.0
        /// Stream resets that open the breaker when they come within `rapidResetWindow`.
        public var rapidResetThreshold = 10
        /// Seconds over which stream resets are counted.
        public var rapidResetWindow = 5.0
        /// The defaults.
        public init() {}
    }

    /// The breaker's state.
    public enum State: Sendable, Equatable {
        /// Requests flow.
        case closed
        /// Requests are refused until `until`.
        case open(until: Double)
        /// One probe is in flight.
        case halfOpen
    }

    /// The answer to "may I send a chunk now?".
    public enum Permission: Sendable, Equatable {
        /// Send it.
        case allowed
        /// Send it as the half-open probe; report its outcome.
        case probe
        /// Do not send; retry after `retryAfter` seconds (0 while a probe is in flight).
        case refused(retryAfter: Double)
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// The current state.
    public private(set) var state: State = .closed
    private var outcomes: [(time: Double, failed: Bool)] = []
    private var resets: [Double] = []
    private var probeInFlight = false
    /// Times the breaker opened.
    public private(set) var openCount = 0

    /// A closed breaker.
    public init(configuration: Configuration = Configuration()) { self.configuration = configuration }

    /// Whether a request may go now.
    public mutating func permission(at now: Double) -> Permission {
        switch state {
        case .closed:
            return .allowed
        case .open(let until):
            guard now >= until else { return .refused(retryAfter: until - now) }
            state = .halfOpen
            probeInFlight = true
            return .probe
        case .halfOpen:
            if probeInFlight { return .refused(retryAfter: 0) }
            probeInFlight = true
            return .probe
        }
    }

    /// Records a request's success.
    public mutating func recordSuccess(at now: Double) {
        switch state {
        case .halfOpen:
            state = .closed
            probeInFlight = false
            outcomes.removeAll()
            resets.removeAll()
        case .closed:
            append(failed: false, at: now)
        case .open:
            break  // a late answer from before the breaker opened changes nothing
        }
    }

    /// Records a request's failure.
    public mutating func recordFailure(at now: Double) {
        switch state {
        case .halfOpen:
            open(at: now)
        case .closed:
            append(failed: true, at: now)
            let rate = failureRate
            if outcomes.count >= configuration.minimumRequests, rate >= configuration.failureRateThreshold {
                open(at: now)
            }
        case .open:
            break
        }
    }

    /// Records a stream reset; a rapid burst opens the breaker.
    public mutating func recordStreamReset(at now: Double) {
        resets.append(now)
        resets.removeAll { now - $0 > configuration.rapidResetWindow }
        if resets.count >= configuration.rapidResetThreshold {
            switch state {
            case .open: break
            case .closed, .halfOpen: open(at: now)
            }
        }
    }

    /// Failure rate of the current window (0 when empty).
    public var failureRate: Double {
        outcomes.isEmpty ? 0 : Double(outcomes.filter(\.failed).count) / Double(outcomes.count)
    }

    /// Stream resets inside the rapid-reset window.
    public var recentResetCount: Int { resets.count }

    private mutating func append(failed: Bool, at now: Double) {
        outcomes.append((now, failed))
        outcomes.removeAll { now - $0.time > configuration.windowSeconds }
        if outcomes.count > configuration.windowSize { outcomes.removeFirst(outcomes.count - configuration.windowSize) }
    }

    private mutating func open(at now: Double) {
        state = .open(until: now + configuration.coolDown)
        probeInFlight = false
        openCount += 1
        outcomes.removeAll()
        resets.removeAll()
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.state == rhs.state && lhs.openCount == rhs.openCount && lhs.probeInFlight == rhs.probeInFlight
            && lhs.outcomes.map(\.failed) == rhs.outcomes.map(\.failed) && lhs.resets == rhs.resets
    }
}
