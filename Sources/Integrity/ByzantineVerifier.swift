public import AetherIO
import Synchronization

/// Spot-checks that a server really stores what it acknowledged.
///
/// 1. At the start the verifier draws the sampled chunks (`ByzantineSampler`, CSPRNG, unbiased).
/// 2. Call `acknowledged(chunk:)` when the server ACKs a chunk. When it returns true the chunk is
///    sampled: call `challenge(chunk:contents:)` within **100 ms** of that ACK, so a server that
///    acknowledged before storing has no time to fetch the bytes; later throws
///    `.challengeWindowMissed` (our fault: no strike, the sample is dropped).
/// 3. Send the challenge (index and nonce). Pass the answer to `receive(chunk:response:)`; an
///    answer later than **500 ms** after the challenge counts as a timeout even when correct.
///    Call `expireOverdue()` periodically so a server that never answers is struck too.
/// 4. A wrong, late, missing or unsolicited answer is a strike; at **three strikes** the server is
///    untrusted for good and every later call reports `.untrusted` (fail closed).
///
/// Time comes from the monotonic reading of an injected clock.
public final class ByzantineVerifier: Sendable {
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

    /// Records the server's ACK of `chunk`; true when the chunk must be challenged now (within 100 ms).
    public func acknowledged(chunk: Int) -> Bool {
        let now = clock.monotonicMilliseconds()
        return state.withLock { $0.acknowledged(chunk: chunk, now: now) }
    }

    /// Makes the challenge for an acknowledged sampled chunk from the client's copy of its bytes.
    public func challenge(chunk: Int, contents: UnsafeRawBufferPointer) throws(IntegrityError) -> ByzantineChallenge {
        let challenge = try ByzantineChallenge.fresh(chunkIndex: chunk)
        let expected = try unsafe challenge.response(chunk: contents)
        let now = clock.monotonicMilliseconds()
        try state.withLock { (machine) throws(IntegrityError) in
            try machine.issue(chunk: chunk, expected: expected, now: now)
        }
        return challenge
    }

    /// Makes the challenge for an acknowledged sampled chunk from the client's copy of its bytes.
    public func challenge(chunk: Int, contents: some Sequence<UInt8>) throws(IntegrityError) -> ByzantineChallenge {
        let bytes = Array(contents)
        let challenge = try ByzantineChallenge.fresh(chunkIndex: chunk)
        let expected = try challenge.response(chunk: bytes)
        let now = clock.monotonicMilliseconds()
        try state.withLock { (machine) throws(IntegrityError) in
            try machine.issue(chunk: chunk, expected: expected, now: now)
        }
        return challenge
    }

    /// Judges the server's answer to the challenge for `chunk` (constant-time comparison).
    public func receive(chunk: Int, response: Digest32) -> ByzantineOutcome {
        let now = clock.monotonicMilliseconds()
        return state.withLock { $0.respond(chunk: chunk, response: response, now: now) }
    }

    /// Strikes every challenge unanswered for more than 500 ms.
    public func expireOverdue() -> [ByzantineOutcome] {
        let now = clock.monotonicMilliseconds()
        return state.withLock { $0.expire(now: now) }
    }

    /// Strikes so far.
    public var strikes: Int { state.withLock { $0.strikes } }

    /// Whether the server reached three strikes.
    public var isUntrusted: Bool { state.withLock { $0.isUntrusted } }

    /// Challenges answered correctly and in time.
    public var verifiedCount: Int { state.withLock { $0.verifiedCount } }
}
