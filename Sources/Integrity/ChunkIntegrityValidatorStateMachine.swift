import AetherIO

/// The pure state of `ChunkIntegrityValidator`: per-session counters and the time-bucketed nonce cache.
///
/// Nonces are filed in buckets by their message timestamp. A message older than `now - skew` is
/// refused by the timestamp check, so a bucket that ends before that can never again hold a
/// nonce that matters, and is dropped whole (eviction costs O(buckets), not O(nonces)). The cache
/// never holds more than `maximumNonces`; when full it refuses new messages instead of evicting
/// live nonces, which would re-open a replay window (fail closed).
struct ChunkIntegrityValidatorStateMachine: Sendable {
    let configuration: ChunkIntegrityValidator.Configuration
    private(set) var lastCounters: [String: UInt64] = [:]
    private(set) var buckets: [Int64: Set<Digest32>] = [:]
    private(set) var nonceCount = 0

    init(configuration: ChunkIntegrityValidator.Configuration) {
        self.configuration = configuration
    }

    /// Checks one message; records its counter and nonce only when every check passes.
    mutating func validate(
        sessionID: String, counter: UInt64, timestampMilliseconds: Int64, nonce: Digest32, now: Int64
    ) throws(IntegrityError) {
        evict(now: now)
        let (difference, overflow) = now.subtractingReportingOverflow(timestampMilliseconds)
        guard !overflow, difference.magnitude <= UInt64(configuration.skewWindowMilliseconds) else {
            throw IntegrityError(
                .timestampOutOfWindow,
                "message timestamp is more than \(configuration.skewWindowMilliseconds) ms from the clock")
        }
        let last = lastCounters[sessionID]
        if let last, counter <= last {
            throw IntegrityError(.replayDetected, "message counter \(counter) does not exceed \(last)")
        }
        if last == nil, lastCounters.count >= configuration.maximumSessions {
            throw IntegrityError(.capacityExceeded, "too many sessions tracked (\(configuration.maximumSessions))")
        }
        for bucket in buckets.values where bucket.contains(nonce) {
            throw IntegrityError(.replayDetected, "nonce was already used")
        }
        guard nonceCount < configuration.maximumNonces else {
            throw IntegrityError(.capacityExceeded, "nonce cache is full (\(configuration.maximumNonces)); retry later")
        }
        buckets[bucketIndex(timestampMilliseconds), default: []].insert(nonce)
        nonceCount += 1
        lastCounters[sessionID] = counter
    }

    /// Forgets a finished session's counter.
    mutating func endSession(_ sessionID: String) {
        lastCounters[sessionID] = nil
    }

    /// Drops every bucket that ends before `now - skew`.
    mutating func evict(now: Int64) {
        let oldest = now.subtractingReportingOverflow(configuration.skewWindowMilliseconds)
        let cutoff = oldest.overflow ? Int64.min : oldest.partialValue
        let live = bucketIndex(cutoff)
        for (index, bucket) in buckets where index < live {
            nonceCount -= bucket.count
            buckets[index] = nil
        }
    }

    private func bucketIndex(_ milliseconds: Int64) -> Int64 {
        let width = configuration.bucketWidthMilliseconds
        let quotient = milliseconds / width
        return milliseconds % width < 0 ? quotient - 1 : quotient
    }
}
