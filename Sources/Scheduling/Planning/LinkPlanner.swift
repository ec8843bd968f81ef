/// The whole sending decision on an interrupted path: how many requests in flight, how large each, and whether to
/// start one now. It takes the fusion scheduler's decision (what the link carries) and bounds it by what can arrive
/// before the next expected interruption, so every interruption costs at most what was in flight since the last
/// acknowledgement and acknowledged bytes grow between any two interruptions a few round trips apart
/// (`docs/SCHEDULING.md`, "Progress on interrupted paths", derives the rules).
public enum LinkPlanner {
    /// What the protocol keeps of a request cut part way.
    public struct Keeping: Sendable, Equatable {
        /// The smallest request there is: a request is a whole number of units (a native chunk, an S3 part, an
        /// IETF or tus append's granule).
        public let unitBytes: Int
        /// Whether the destination keeps what arrived of a cut request (native: the chunks of a run stored before
        /// the cut and the received prefix of the chunk under way; IETF and tus: the bytes up to the cut); false
        /// when a cut request is lost whole (an S3 part).
        public let keepsPrefix: Bool

        /// Creates the keeping rule of a protocol.
        public init(unitBytes: Int, keepsPrefix: Bool) {
            self.unitBytes = max(1, unitBytes)
            self.keepsPrefix = keepsPrefix
        }
    }

    /// Plans from the scheduler's `decision` for a protocol that keeps `keeping`, a round trip of `roundTripTime`
    /// seconds, and `interruptions` (nil: none seen lately, the decision stands).
    /// - Returns: the streams and request size to use, and whether to hold new requests back until the expected
    ///   interruption has passed.
    public static func plan(
        _ decision: SchedulingDecision, keeping: Keeping, roundTripTime: Double,
        interruptions: InterruptionForecast?
    ) -> LinkPlan {
        let unit = keeping.unitBytes
        let wanted = max(unit, decision.chunkSizeBytes / unit * unit)
        let rate = decision.predictedBitsPerSecond / 8
        guard let interruptions, decision.parallelism > 0, rate > 0 else {
            return LinkPlan(streams: decision.parallelism, requestBytes: wanted, holdsBack: false, budgetBytes: nil)
        }
        // Where a cut request is lost whole and the interruptions are regular, the planner owns the timing (rules 2
        // and 4), and a second stream is allowed where the budget carries it: the scheduler's model sees no cost in
        // one stream, but one request at a time leaves the link idle for the server's answer to each part (S3 on the
        // link lab: one stream of 5 MiB parts moved 65-75 % of the link's rate).
        let streams =
            !keeping.keepsPrefix && interruptions.regular
            ? max(decision.parallelism, min(2, decision.strategy.parallelChunks)) : decision.parallelism
        let rtt = max(0, roundTripTime)
        let horizon = interruptions.horizon
        // What the link delivers between the first byte (one round trip from now) and the expected interruption: no
        // more than that is put in flight, whatever the fused decision said. Streams share the link, so requests of
        // equal size started together finish together: where a cut request is lost whole, one rate too high loses
        // every one of them, so that budget is taken at the pessimistic rate; where the prefix is kept, at the
        // predicted one.
        let budgetRate = keeping.keepsPrefix ? rate : max(decision.pessimisticBitsPerSecond / 8, rate * 0.25)
        let budget = Int(min(budgetRate * max(0, horizon - rtt), 1e15))
        // Each of n streams moves its request at rate / n, so a whole unit arrives before the interruption only
        // while n <= budget / unit: fewer streams, never fewer than one.
        let fitting = max(1, min(streams, budget / unit))
        let request = min(wanted, max(unit, budget / fitting / unit * unit))
        // A protocol that loses a cut request whole starts none that cannot finish before a regular interruption
        // that is not late yet, when one could finish in a whole interval: it waits for the interruption to pass and
        // starts right after it. When not even a whole interval carries a unit, waiting gains nothing.
        let oneUnitSeconds = rtt + Double(unit) / rate
        let holdsBack =
            !keeping.keepsPrefix && oneUnitSeconds <= interruptions.meanInterval * 0.8
            && interruptions.isDue(within: oneUnitSeconds)
        return LinkPlan(streams: fitting, requestBytes: request, holdsBack: holdsBack, budgetBytes: budget)
    }
}

/// The link planner's answer.
public struct LinkPlan: Sendable, Equatable {
    /// Requests to keep in flight (0 when the resource manager paused uploads).
    public let streams: Int
    /// Bytes each request carries: a whole number of the protocol's units.
    public let requestBytes: Int
    /// Whether to start no new request now (in flight ones go on): a cut one would be lost whole.
    public let holdsBack: Bool
    /// The bytes that may be in flight before the next expected interruption; nil when none is expected.
    public let budgetBytes: Int?

    /// Creates a plan.
    public init(streams: Int, requestBytes: Int, holdsBack: Bool, budgetBytes: Int?) {
        self.streams = streams
        self.requestBytes = requestBytes
        self.holdsBack = holdsBack
        self.budgetBytes = budgetBytes
    }
}
