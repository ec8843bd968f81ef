/// The interruptions of the path seen so far (resets, refusals, timeouts), as the times they began, and what they
/// say about the next one. Failures less than `burstGap` seconds after the previous one belong to the same
/// interruption: a reset cuts every request in flight at once, and their retries fail again while the link is down.
/// Only the last `window` seconds count, so a link that settles down stops being treated as interrupted.
public struct InterruptionHistory: Sendable, Equatable {
    /// Failures closer than this to the previous one count as the same interruption.
    public let burstGap: Double
    /// Seconds of history the forecast is made from.
    public let window: Double
    /// When each interruption in the window began, oldest first (seconds on the caller's clock).
    public private(set) var starts: [Double] = []
    private var lastFailure: Double?

    /// An empty history.
    public init(burstGap: Double = 2, window: Double = 300) {
        self.burstGap = burstGap
        self.window = window
    }

    /// Notes a failure that interrupted the path at `time`.
    public mutating func note(at time: Double) {
        defer { lastFailure = max(lastFailure ?? time, time) }
        if let last = lastFailure, time - last < burstGap { return }
        starts.append(time)
        starts.removeAll { $0 < time - window }
    }

    /// Mean seconds between interruptions over the last `window` seconds (or since `origin`, when later), at `time`;
    /// nil when none began in that span. The span runs to `time`, so a quiet stretch since the last one lengthens it.
    public func meanInterval(at time: Double, origin: Double = 0) -> Double? {
        let from = max(origin, time - window)
        let count = starts.count { $0 >= from && $0 <= time }
        guard count > 0 else { return nil }
        return max(time - from, burstGap) / Double(count)
    }

    /// What the history says about the next interruption at `time` (`origin`: when the upload began); nil when
    /// there was none in the window.
    public func forecast(at time: Double, origin: Double = 0) -> InterruptionForecast? {
        guard let mean = meanInterval(at: time, origin: origin), let last = starts.last(where: { $0 <= time }) else {
            return nil
        }
        let recent = starts.filter { $0 >= max(origin, time - window) && $0 <= time }
        let gaps = zip(recent.dropFirst(), recent).map { $0 - $1 }
        var regular = false
        var period = mean
        if gaps.count >= InterruptionForecast.regularGapCount {
            let gapMean = gaps.reduce(0, +) / Double(gaps.count)
            let variance = gaps.reduce(0) { $0 + ($1 - gapMean) * ($1 - gapMean) } / Double(gaps.count)
            if gapMean > 0, variance.squareRoot() / gapMean <= InterruptionForecast.regularVariation {
                regular = true
                period = gapMean
            }
        }
        return InterruptionForecast(meanInterval: period, sinceLast: max(0, time - last), regular: regular)
    }
}

/// When the next interruption of the path is expected.
public struct InterruptionForecast: Sendable, Equatable {
    /// Gaps needed before interruptions count as regular (periodic).
    public static let regularGapCount = 2
    /// The largest coefficient of variation of the gaps for which interruptions count as regular.
    public static let regularVariation = 0.25

    /// Mean seconds between interruptions (the period, when they are regular).
    public let meanInterval: Double
    /// Seconds since the last one began.
    public let sinceLast: Double
    /// Whether they come at a steady period (a phone handing over on a schedule, a NAT timer), so the time to the
    /// next is the period less the time since the last; otherwise they are taken as a Poisson process, whose expected
    /// time to the next is the mean interval whatever the time since the last.
    public let regular: Bool

    /// Creates a forecast.
    public init(meanInterval: Double, sinceLast: Double, regular: Bool) {
        self.meanInterval = max(0.001, meanInterval)
        self.sinceLast = max(0, sinceLast)
        self.regular = regular
    }

    /// Seconds until the next interruption is expected. Regular: the period less the time since the last, but never
    /// under a quarter of the period (an interruption that is late may come at any moment, yet a sender that waits
    /// for it makes no progress). Poisson: the mean interval.
    public var horizon: Double {
        guard regular else { return meanInterval }
        return max(meanInterval - sinceLast, meanInterval * 0.25)
    }

    /// Whether a regular interruption is due before `seconds` from now and is not yet late.
    public func isDue(within seconds: Double) -> Bool {
        regular && sinceLast < meanInterval && meanInterval - sinceLast < seconds
    }
}
