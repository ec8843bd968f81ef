import FoundationEssentials

/// The verifier's outstanding challenges: each nonce answers once, within the lifetime, or never.
/// Pure: the owner passes `now` and holds it in a Mutex.
struct PossessionVerifierStateMachine: Sendable {
    struct Pending: Sendable {
        let challenge: PossessionChallenge
        let key: X25519.PrivateKey
        let issuedAt: Date
    }

    let lifetime: TimeInterval
    let capacity: Int
    private var pending: [UUIDv7: Pending] = [:]
    private var answered: [UUIDv7: Date] = [:]

    init(lifetime: TimeInterval, capacity: Int) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    var pendingCount: Int { pending.count }

    /// Forgets challenges and answered nonces older than the lifetime: a response naming them is late anyway.
    private mutating func purge(now: Date) {
        pending = pending.filter { now.timeIntervalSince($0.value.issuedAt) < lifetime }
        answered = answered.filter { now.timeIntervalSince($0.value) < lifetime }
    }

    /// Records a new challenge, or refuses when `capacity` challenges are outstanding.
    mutating func issue(_ entry: Pending, now: Date) -> Bool {
        purge(now: now)
        guard pending.count < capacity, pending[entry.challenge.nonce] == nil else { return false }
        pending[entry.challenge.nonce] = entry
        return true
    }

    enum Claim {
        case fresh(Pending)
        case replayed
        case late
        case unknown
    }

    /// Takes the challenge `nonce` answers. A nonce is consumed by its first response, whatever the outcome.
    mutating func claim(_ nonce: UUIDv7, now: Date) -> Claim {
        defer { purge(now: now) }
        if let issuedAt = answered[nonce] {
            return now.timeIntervalSince(issuedAt) < lifetime ? .replayed : .late
        }
        guard let entry = pending.removeValue(forKey: nonce) else {
            // Forgotten or never issued. The time inside a nonce is only a hint here (the nonce matched nothing),
            // used to say "late" rather than "unknown"; both are rejections.
            return now.timeIntervalSince(nonce.date) >= lifetime ? .late : .unknown
        }
        answered[nonce] = entry.issuedAt
        guard now.timeIntervalSince(entry.issuedAt) < lifetime else { return .late }
        return .fresh(entry)
    }
}
