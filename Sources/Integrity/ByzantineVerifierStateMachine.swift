import AetherIO

/// The pure state of `ByzantineVerifier`: where each sampled chunk stands (waiting for an acknowledgement, for a
/// challenge, for an answer, verified or failed), the open challenges and the server's strikes. Every method
/// takes the time explicitly.
struct ByzantineVerifierStateMachine: Sendable {
    /// A challenge must be issued within this long after the acknowledgement of each chunk it names.
    static let issueWindowMilliseconds: Int64 = 100
    /// An answer must arrive within this long after the challenge.
    static let responseTimeoutMilliseconds: Int64 = 500
    /// Strikes after which the server is untrusted.
    static let strikeLimit = 3

    enum Phase: Sendable, Equatable {
        case awaitingAcknowledgement
        case acknowledged(at: Int64)
        case challenged
        case verified
        case failed
    }

    /// An issued challenge waiting for its answer.
    struct Open: Sendable {
        let issuedAt: Int64
        let items: [ByzantineChallenge.Item]
        let expected: [Digest32]
    }

    private(set) var phases: [Int: Phase]
    /// Open challenges by nonce.
    private(set) var open: [[UInt8]: Open] = [:]
    private(set) var strikes = 0
    private(set) var missedWindows = 0

    init(sampledChunks: [Int]) {
        phases = Dictionary(sampledChunks.map { ($0, Phase.awaitingAcknowledgement) }, uniquingKeysWith: { a, _ in a })
    }

    var isUntrusted: Bool { strikes >= Self.strikeLimit }

    /// Sampled chunks verified so far.
    var verifiedCount: Int { phases.values.count { $0 == .verified } }

    /// Sampled chunks still to be checked (neither verified nor failed nor being checked), ascending.
    var pending: [Int] {
        phases.filter { chunk in
            switch chunk.value {
            case .awaitingAcknowledgement, .acknowledged: true
            case .challenged, .verified, .failed: false
            }
        }.keys.sorted()
    }

    /// Sampled chunks whose answer was wrong, ascending.
    var failed: [Int] { phases.filter { $0.value == .failed }.keys.sorted() }

    /// Records an acknowledgement; true when the chunk is sampled, waits for a check, and must be challenged within
    /// 100 ms.
    mutating func acknowledged(chunk: Int, now: Int64) -> Bool {
        guard !isUntrusted, phases[chunk] == .awaitingAcknowledgement else { return false }
        phases[chunk] = .acknowledged(at: now)
        return true
    }

    /// Records that the challenge `nonce` over `items` is being sent now, with the expected answers.
    mutating func issue(nonce: [UInt8], items: [ByzantineChallenge.Item], expected: [Digest32], now: Int64)
        throws(IntegrityError)
    {
        guard !isUntrusted else { throw IntegrityError(.untrustedServer, "the server has three strikes") }
        guard open[nonce] == nil, items.count == expected.count else {
            throw IntegrityError(.invalidArgument, "this challenge is already open or its answers do not fit it")
        }
        var acknowledgedAt: [Int64] = []
        for item in items {
            guard case .acknowledged(let at) = phases[item.index] else {
                throw IntegrityError(
                    .invalidArgument, "chunk \(item.index) is not an acknowledged sample waiting for a check")
            }
            acknowledgedAt.append(at)
        }
        guard acknowledgedAt.allSatisfy({ now - $0 <= Self.issueWindowMilliseconds }) else {
            // Our delay, not the server's fault: no strike; the chunks wait for a fresh acknowledgement.
            for item in items { phases[item.index] = .awaitingAcknowledgement }
            missedWindows += 1
            throw IntegrityError(
                .challengeWindowMissed, "the challenge was not issued within 100 ms of the acknowledgement")
        }
        for item in items { phases[item.index] = .challenged }
        open[nonce] = Open(issuedAt: now, items: items, expected: expected)
    }

    /// Judges the answers to the challenge `nonce`, one per item in order (nil: the server does not hold it).
    mutating func respond(nonce: [UInt8], responses: [Digest32?], now: Int64) -> ByzantineOutcome {
        guard !isUntrusted else { return .untrusted }
        guard let challenge = open.removeValue(forKey: nonce) else { return strike([], .unexpectedResponse) }
        let chunks = challenge.items.map(\.index)
        if now - challenge.issuedAt > Self.responseTimeoutMilliseconds {
            for chunk in chunks { phases[chunk] = .awaitingAcknowledgement }
            return strike(chunks, .timeout)
        }
        guard responses.count == challenge.items.count else {
            for chunk in chunks { phases[chunk] = .failed }
            return strike(chunks, .wrongResponse)
        }
        var wrong: [Int] = []
        for (position, item) in challenge.items.enumerated() {
            let right = responses[position] == challenge.expected[position]
            phases[item.index] = right ? .verified : .failed
            if !right { wrong.append(item.index) }
        }
        return wrong.isEmpty ? .verified(chunks: chunks) : strike(wrong, .wrongResponse)
    }

    /// Fails every chunk of the challenge `nonce`: its answer was refused before its MACs were judged (an old
    /// format, a hash or proof that differs, a sampled chunk the server says it no longer holds).
    mutating func reject(nonce: [UInt8]) -> ByzantineOutcome {
        guard !isUntrusted else { return .untrusted }
        guard let challenge = open.removeValue(forKey: nonce) else { return strike([], .unexpectedResponse) }
        let chunks = challenge.items.map(\.index)
        for chunk in chunks { phases[chunk] = .failed }
        return strike(chunks, .wrongResponse)
    }

    /// Forgets the challenge `nonce` without a strike: no answer arrived because the request failed on the way (a
    /// reset, a refused connection); its chunks wait for a fresh acknowledgement and a fresh nonce.
    mutating func withdraw(nonce: [UInt8]) {
        guard let challenge = open.removeValue(forKey: nonce) else { return }
        for item in challenge.items where phases[item.index] == .challenged {
            phases[item.index] = .awaitingAcknowledgement
        }
    }

    /// Strikes every challenge whose answer is overdue (its chunks wait to be checked again); returns the outcomes.
    mutating func expire(now: Int64) -> [ByzantineOutcome] {
        var outcomes: [ByzantineOutcome] = []
        let overdue = open.filter { now - $0.value.issuedAt > Self.responseTimeoutMilliseconds }
        for (nonce, challenge) in overdue.sorted(by: { $0.value.issuedAt < $1.value.issuedAt }) {
            open[nonce] = nil
            let chunks = challenge.items.map(\.index)
            for chunk in chunks { phases[chunk] = .awaitingAcknowledgement }
            outcomes.append(isUntrusted ? .untrusted : strike(chunks, .timeout))
        }
        return outcomes
    }

    private mutating func strike(_ chunks: [Int], _ reason: ByzantineOutcome.StrikeReason) -> ByzantineOutcome {
        strikes += 1
        return isUntrusted ? .untrusted : .strike(chunks: chunks, reason: reason, strikes: strikes)
    }
}
