public import AetherIO
import Synchronization

/// Spot-checks that a server really holds what it acknowledged (upload-engine v2.2 ByzantineVerifier).
///
/// 1. At the start the verifier draws the sampled chunks (`ByzantineSampler`: the spec's count, Fisher-Yates over
///    the CSPRNG). `pendingChunks` are those still to be checked.
/// 2. `prepare(uploadID:items:bytes:)` makes a challenge (fresh nonce, version 2) over ranges of pending chunks and
///    the expected answers from the client's own bytes of those ranges; nothing is sent yet.
/// 3. Call `acknowledged(chunk:)` when the server says it holds a chunk (its chunk receipt, or a status answer
///    listing it), then `issue(_:)` within **100 ms** of every such acknowledgement, so a server that acknowledged
///    before storing has no time to fetch the bytes; later throws `.challengeWindowMissed` (our delay: no strike,
///    the chunks wait for a fresh acknowledgement).
/// 4. Send the challenge. Pass the answers to `receive(_:responses:)`; an answer later than **500 ms** after the
///    challenge counts as a timeout even when right. `withdraw(_:)` forgets a challenge whose request failed on the
///    way (no answer came: no strike); `reject(_:)` fails one whose answer was refused before its MACs were judged;
///    `expireOverdue()` strikes the ones never answered.
/// 5. One strike per failed challenge: wrong answers (their chunks are failed for good), late or missing answers
///    and unsolicited ones (their chunks wait to be checked again); at **three strikes** the server is untrusted
///    for good and every later call reports `.untrusted` (fail closed).
///
/// Time comes from the monotonic reading of an injected clock.
public final class ByzantineVerifier: Sendable {
    /// A challenge made but not yet issued, with the answers the client expects.
    public struct PreparedChallenge: Sendable {
        /// What is sent once issued.
        public let challenge: ByzantineChallenge
        let expected: [Digest32]
    }

    private let clock: any AetherClock
    private let state: Mutex<ByzantineVerifierStateMachine>

    /// The sampled chunk indices, in draw order.
    public let sampledChunks: [Int]

    /// A verifier for an upload of `chunkCount` chunks, sampled with the system CSPRNG.
    public convenience init(chunkCount: Int, clock: any AetherClock = SystemClock()) {
        self.init(sampledChunks: ByzantineSampler.sample(chunkCount: max(0, chunkCount)), clock: clock)
    }

    /// A verifier over a given sample (tests, or a sample drawn with `ByzantineSampler` elsewhere).
    public init(sampledChunks: [Int], clock: any AetherClock) {
        self.clock = clock
        self.sampledChunks = sampledChunks
        state = Mutex(ByzantineVerifierStateMachine(sampledChunks: sampledChunks))
    }

    /// Records that the server acknowledges holding `chunk` now; true when the chunk is sampled and waits for a
    /// check (challenge it within 100 ms).
    public func acknowledged(chunk: Int) -> Bool {
        let now = clock.monotonicMilliseconds()
        return state.withLock { $0.acknowledged(chunk: chunk, now: now) }
    }

    /// Makes a challenge over `items` of upload `uploadID` with a fresh nonce, and the expected answers from
    /// `bytes`, the client's own bytes of each item's range in order.
    public func prepare(uploadID: [UInt8], items: [ByzantineChallenge.Item], bytes: [[UInt8]])
        throws(IntegrityError) -> PreparedChallenge
    {
        guard bytes.count == items.count else {
            throw IntegrityError(.invalidArgument, "a spot check needs the client's bytes of every range")
        }
        let challenge = try ByzantineChallenge.fresh(uploadID: uploadID, items: items)
        var expected: [Digest32] = []
        for (item, range) in zip(items, bytes) { expected.append(try challenge.response(for: item, bytes: range)) }
        return PreparedChallenge(challenge: challenge, expected: expected)
    }

    /// Issues a prepared challenge: every chunk it names must have been acknowledged within the last 100 ms.
    public func issue(_ prepared: PreparedChallenge) throws(IntegrityError) -> ByzantineChallenge {
        let now = clock.monotonicMilliseconds()
        let challenge = prepared.challenge
        try state.withLock { (machine) throws(IntegrityError) in
            try machine.issue(nonce: challenge.nonce, items: challenge.items, expected: prepared.expected, now: now)
        }
        return challenge
    }

    /// Judges the server's answers to `challenge`, one per item in order (nil where the server says it does not hold
    /// the chunk), in constant time.
    public func receive(_ challenge: ByzantineChallenge, responses: [Digest32?]) -> ByzantineOutcome {
        let now = clock.monotonicMilliseconds()
        return state.withLock { $0.respond(nonce: challenge.nonce, responses: responses, now: now) }
    }

    /// Fails every chunk of `challenge`: its answer was refused before its MACs were judged.
    public func reject(_ challenge: ByzantineChallenge) -> ByzantineOutcome {
        state.withLock { $0.reject(nonce: challenge.nonce) }
    }

    /// Forgets `challenge` without a strike: its request failed on the way, so no answer came.
    public func withdraw(_ challenge: ByzantineChallenge) {
        state.withLock { $0.withdraw(nonce: challenge.nonce) }
    }

    /// Strikes every challenge unanswered for more than 500 ms.
    public func expireOverdue() -> [ByzantineOutcome] {
        let now = clock.monotonicMilliseconds()
        return state.withLock { $0.expire(now: now) }
    }

    /// Sampled chunks still to be checked, ascending.
    public var pendingChunks: [Int] { state.withLock { $0.pending } }

    /// Sampled chunks the server answered wrongly, ascending.
    public var failedChunks: [Int] { state.withLock { $0.failed } }

    /// Strikes so far.
    public var strikes: Int { state.withLock { $0.strikes } }

    /// Whether the server reached three strikes.
    public var isUntrusted: Bool { state.withLock { $0.isUntrusted } }

    /// Sampled chunks whose ranges the server proved it holds.
    public var verifiedCount: Int { state.withLock { $0.verifiedCount } }

    /// Challenges we issued too late (no strike).
    public var missedWindows: Int { state.withLock { $0.missedWindows } }

    /// True when chunks were sampled, every one is verified and the server is trusted: the only state in which the
    /// spot check passed.
    public var passed: Bool {
        state.withLock { !$0.isUntrusted && !sampledChunks.isEmpty && $0.verifiedCount == sampledChunks.count }
    }
}
