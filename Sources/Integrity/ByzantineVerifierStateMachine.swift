import AetherIO

/// The pure state of `ByzantineVerifier`: which sampled chunks are waiting for an ACK, for a
/// challenge, or for an answer, and the server's strikes. Every method takes the time explicitly.
struct ByzantineVerifierStateMachine: Sendable {
    /// A challenge must be issued within this long after the chunk's ACK.
    static let issueWindowMilliseconds: Int64 = 100
    /// An answer must arrive within this long after the challenge.
    static let responseTimeoutMilliseconds: Int64 = 500
    /// Strikes after which the server is untrusted.
    static let strikeLimit = 3

    enum Phase: Sendable {
        case awaitingAcknowledgement
        case acknowledged(at: Int64)
        case challenged(at: Int64, expected: Digest32)
        case finished
    }

    private(set) var phases: [Int: Phase]
    private(set) var strikes = 0
    private(set) var verifiedCount = 0
    private(set) var missedWindows = 0

    init(sampledChunks: [Int]) {
        phases = Dictionary(sampledChunks.map { ($0, Phase.awaitingAcknowledgement) }, uniquingKeysWith: { a, _ in a })
    }

    var isUntrusted: Bool { strikes >= Self.strikeLimit }

    /// Records an ACK; true when the chunk is sampled and must be challenged within 100 ms.
    mutating func acknowledged(chunk: Int, now: Int64) -> Bool {
        guard !isUntrusted, case .awaitingAcknowledgement = phases[chunk] else { return false }
        phases[chunk] = .acknowledged(at: now)
        return true
    }

    /// Records that the challenge is being sent now with the expected answer.
    mutating func issue(chunk: Int, expected: Digest32, now: Int64) throws(IntegrityError) {
        guard !isUntrusted else { throw IntegrityError(.untrustedServer, "the server has three strikes") }
        guard case .acknowledged(let ackAt) = phases[chunk] else {
            throw IntegrityError(.invalidArgument, "chunk \(chunk) is not an acknowledged, unchallenged sample")
        }
        guard now - ackAt <= Self.issueWindowMilliseconds else {
            // Our delay, not the server's fault: no strike, but the sample no longer proves anything.
            phases[chunk] = .finished
            missedWindows += 1
            throw IntegrityError(
                .challengeWindowMissed, "challenge for chunk \(chunk) was not issued within 100 ms of its ACK")
        }
        phases[chunk] = .challenged(at: now, expected: expected)
    }

    /// Judges an answer.
    mutating func respond(chunk: Int, response: Digest32, now: Int64) -> ByzantineOutcome {
        guard !isUntrusted else { return .untrusted }
        guard case .challenged(let issuedAt, let expected) = phases[chunk] else {
            return strike(chunk, .unexpectedResponse)
        }
        phases[chunk] = .finished
        if now - issuedAt > Self.responseTimeoutMilliseconds { return strike(chunk, .timeout) }
        guard response == expected else { return strike(chunk, .wrongResponse) }
        verifiedCount += 1
        return .verified(chunk: chunk)
    }

    /// Strikes every challenge whose answer is overdue; returns the outcomes.
    mutating func expire(now: Int64) -> [ByzantineOutcome] {
        var outcomes: [ByzantineOutcome] = []
        for (chunk, phase) in phases.sorted(by: { $0.key < $1.key }) {
            if case .challenged(let issuedAt, _) = phase, now - issuedAt > Self.responseTimeoutMilliseconds {
                phases[chunk] = .finished
                outcomes.append(isUntrusted ? .untrusted : strike(chunk, .timeout))
            }
        }
        return outcomes
    }

    private mutating func strike(_ chunk: Int, _ reason: ByzantineOutcome.StrikeReason) -> ByzantineOutcome {
        strikes += 1
        return isUntrusted ? .untrusted : .strike(chunk: chunk, reason: reason, strikes: strikes)
    }
}
