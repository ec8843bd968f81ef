/// The reservation table of one upload session, a pure value behind `ChunkIdempotencyManager`'s lock.
/// Times are wall-clock milliseconds since the epoch (a reservation's lifetime outlives the process).
struct IdempotencyStateMachine {
    typealias KeyState = ChunkIdempotencyManager.KeyState

    struct Entry {
        var index: Int
        var attempt: Int
        var state: KeyState
        var expiresAt: Int64
    }

    /// What a reservation found.
    enum Outcome: Equatable {
        case reserved
        case inFlight
        case completed
        case earlierRun
    }

    let timeToLive: Int64
    /// Attempts below this were numbered by an earlier run of this session; never used again.
    private(set) var attemptBase: Int
    /// The highest attempt this run has used (and must be persisted before it is sent); -1 when none.
    private(set) var highestAttempt: Int
    private(set) var entries: [String: Entry] = [:]
    private var highestAttemptByIndex: [Int: Int] = [:]
    private var nextPurge = Int64.max

    init(timeToLive: Int64, attemptBase: Int) {
        self.timeToLive = timeToLive
        self.attemptBase = attemptBase
        highestAttempt = attemptBase - 1
    }

    /// The attempt `reserveNext` would use for chunk `index`.
    func nextAttempt(index: Int) -> Int {
        max(attemptBase, (highestAttemptByIndex[index] ?? -1) + 1)
    }

    /// Check-and-reserve of one key, in one step.
    mutating func reserve(key: String, index: Int, attempt: Int, now: Int64) -> Outcome {
        purge(now: now)
        guard attempt >= attemptBase else { return .earlierRun }
        if let entry = entries[key] {
            switch entry.state {
            case .inFlight: return .inFlight
            case .completed: return .completed
            case .released: break
            }
        }
        let expiry = now.addingReportingOverflow(timeToLive).overflow ? Int64.max : now + timeToLive
        entries[key] = Entry(index: index, attempt: attempt, state: .inFlight, expiresAt: expiry)
        highestAttemptByIndex[index] = max(highestAttemptByIndex[index] ?? -1, attempt)
        highestAttempt = max(highestAttempt, attempt)
        nextPurge = min(nextPurge, expiry)
        return .reserved
    }

    /// Undoes a reservation that could not be recorded (the journal write failed): the key was never handed out.
    mutating func forget(key: String, restoringHighest highest: Int, byIndex indexHighest: Int?, index: Int) {
        entries[key] = nil
        highestAttempt = highest
        highestAttemptByIndex[index] = indexHighest
    }

    /// The highest attempt of chunk `index` so far (for `forget`).
    func highestAttempt(index: Int) -> Int? { highestAttemptByIndex[index] }

    /// Marks an in-flight key acknowledged; false when the key is not in flight.
    mutating func complete(key: String) -> Bool {
        guard entries[key]?.state == .inFlight else { return false }
        entries[key]?.state = .completed
        return true
    }

    /// Lets an in-flight key go after a failed send; false when the key is not in flight.
    mutating func release(key: String) -> Bool {
        guard entries[key]?.state == .inFlight else { return false }
        entries[key]?.state = .released
        return true
    }

    /// The state of `key`, nil when unknown or expired.
    mutating func state(of key: String, now: Int64) -> KeyState? {
        purge(now: now)
        return entries[key]?.state
    }

    /// Drops every entry whose lifetime has ended (at most one pass per earliest expiry).
    private mutating func purge(now: Int64) {
        guard now >= nextPurge else { return }
        entries = entries.filter { $0.value.expiresAt > now }
        nextPurge = entries.values.map(\.expiresAt).min() ?? Int64.max
    }
}
