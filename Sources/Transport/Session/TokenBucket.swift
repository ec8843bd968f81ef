/// A token bucket: `capacity` tokens, refilled at `perSecond` tokens a second, one token per admitted event.
///
/// Pure: the caller passes the monotonic time (milliseconds).
package struct TokenBucket: Sendable, Hashable {
    /// Most tokens held (the burst).
    package let capacity: UInt64
    /// Tokens added per second.
    package let perSecond: UInt64
    /// Tokens in thousandths, so refills at millisecond resolution are exact.
    private var milliTokens: UInt64
    private var updatedAt: UInt64

    /// A full bucket at `now`.
    package init(capacity: UInt64, perSecond: UInt64, now: UInt64) {
        precondition(capacity > 0, "a token bucket holds at least one token")
        self.capacity = capacity
        self.perSecond = perSecond
        milliTokens = capacity * 1_000
        updatedAt = now
    }

    /// Takes one token if there is one.
    package mutating func take(now: UInt64) -> Bool {
        if now > updatedAt {
            let refill = (now - updatedAt).multipliedReportingOverflow(by: perSecond)
            milliTokens = refill.overflow ? capacity * 1_000 : min(capacity * 1_000, milliTokens + refill.partialValue)
            updatedAt = now
        }
        guard milliTokens >= 1_000 else { return false }
        milliTokens -= 1_000
        return true
    }

    /// Whether the bucket is full at `now` (an idle source that can be forgotten).
    package func isFull(now: UInt64) -> Bool {
        let elapsed = now > updatedAt ? now - updatedAt : 0
        return milliTokens + min(elapsed * perSecond, capacity * 1_000) >= capacity * 1_000
    }
}
