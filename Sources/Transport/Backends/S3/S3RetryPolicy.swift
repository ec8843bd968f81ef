/// S3's retry guidance: retry 500, 502, 503 (`SlowDown`) and 504 with exponential back-off and jitter, a bounded
/// number of times. The delay before retry `n` (1-based) is a random fraction of
/// `min(maximumDelay, baseDelay * 2^(n-1))` ("full jitter"), so many clients that were slowed down together do not
/// come back together.
public struct S3RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included (1: never retry).
    public var maximumAttempts: Int
    /// The cap of the first retry's delay.
    public var baseDelay: Duration
    /// The largest delay.
    public var maximumDelay: Duration

    /// A policy; by default 5 attempts, 200 ms base, 20 s cap.
    public init(
        maximumAttempts: Int = 5, baseDelay: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(20)
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// The delay before retry `retry` (1-based) for a uniform random `unit` in [0, 1).
    public func delay(beforeRetry retry: Int, unit: Double) -> Duration {
        let exponent = min(max(retry - 1, 0), 30)
        let ceiling = min(maximumDelay, baseDelay * (1 << exponent))
        return ceiling * min(max(unit, 0), 1)
    }
}
