public import AetherIO
import AetherIntegrity
public import FoundationEssentials
import Synchronization

/// The verifier side of proof of possession: it holds the content, issues challenges (full-content HMAC,
/// HMACs of ranges at random offsets, inclusion proofs and HMACs of random chunks) under a UUIDv7 nonce and a
/// fresh ephemeral X25519 key, and accepts each nonce's first response if it arrives within 15 seconds and every
/// answer matches. Fails closed: anything else throws, and a nonce never answers twice.
public final class ProofOfPossessionVerifier: Sendable {
    /// How long a challenge may be answered, in seconds.
    public static let challengeLifetime: TimeInterval = 15
    /// Most challenges outstanding at once.
    public static let maximumPendingChallenges = 1024

    private let source: any PossessionSource
    /// The stored chunk hashes; nil for a verifier made from a claim, which asks no Merkle questions.
    private let chunkHashes: [Digest32]?
    private let policy: PossessionPolicy
    let clock: any AetherClock
    private let state: Mutex<PossessionVerifierStateMachine>
    /// The claim this verifier checks answers against (its own copy of the content).
    public let claim: PossessionClaim

    /// A verifier for the stored `source`, chunked as the upload was (`chunkHashes` from the stored manifest).
    public init(
        source: any PossessionSource, chunkSize: UInt32, chunkHashes: [Digest32], policy: PossessionPolicy = .init(),
        clock: any AetherClock = SystemClock()
    ) throws(SecurityError) {
        guard chunkSize > 0 else { throw SecurityError(.malformedMessage, "the chunk size must be positive") }
        let expected = (source.size + UInt64(chunkSize) - 1) / UInt64(chunkSize)
        guard UInt64(chunkHashes.count) == expected else {
            throw SecurityError(.malformedMessage, "\(chunkHashes.count) chunk hashes for \(expected) chunks")
        }
        let root: Digest32
        do {
            root = try MerkleProofBuilder(chunkHashes: chunkHashes).root
        } catch {
            throw SecurityError(.limitExceeded, "too many chunks for a Merkle tree")
        }
        self.source = source
        self.chunkHashes = chunkHashes
        self.policy = policy
        self.clock = clock
        self.claim = PossessionClaim(
            contentSize: source.size, chunkSize: chunkSize, chunkCount: expected, merkleRoot: root)
        state = Mutex(
            PossessionVerifierStateMachine(
                lifetime: Self.challengeLifetime, capacity: Self.maximumPendingChallenges))
    }

    /// A verifier for the stored `source` that knows its `claim` (size, chunk size and count, Merkle root) but not
    /// its chunk hashes: no chunk is hashed to make it. Its `policy` may ask only the full content and ranges (a
    /// Merkle question needs the chunk hashes: `.malformedMessage`), so what checking an answer reads is what the
    /// policy names: with ranges only, `rangeCount * rangeLength` bytes.
    public init(
        source: any PossessionSource, claim: PossessionClaim, policy: PossessionPolicy,
        clock: any AetherClock = SystemClock()
    ) throws(SecurityError) {
        guard claim.chunkSize > 0 else { throw SecurityError(.malformedMessage, "the chunk size must be positive") }
        guard claim.contentSize == source.size,
            claim.chunkCount == (source.size + UInt64(claim.chunkSize) - 1) / UInt64(claim.chunkSize)
        else { throw SecurityError(.malformedMessage, "the claim does not describe the content") }
        guard policy.merkleChunkCount == 0 else {
            throw SecurityError(.malformedMessage, "a verifier without chunk hashes asks no Merkle questions")
        }
        self.source = source
        self.chunkHashes = nil
        self.policy = policy
        self.clock = clock
        self.claim = claim
        state = Mutex(
            PossessionVerifierStateMachine(
                lifetime: Self.challengeLifetime, capacity: Self.maximumPendingChallenges))
    }

    /// Challenges outstanding.
    public var pendingChallengeCount: Int { state.withLock { $0.pendingCount } }

    /// A fresh challenge drawn from the policy with the system CSPRNG.
    public func issueChallenge() throws(SecurityError) -> PossessionChallenge {
        try issueChallenge(items: drawItems())
    }

    /// The questions of a fresh challenge, drawn from the policy with the system CSPRNG.
    func drawItems() -> [PossessionChallenge.Item] {
        var random = SecureRandom()
        var items: [PossessionChallenge.Item] = []
        if policy.includeFullHash { items.append(.fullHash) }
        if claim.contentSize > 0 {
            let length = UInt32(min(UInt64(policy.rangeLength), claim.contentSize))
            for _ in 0..<policy.rangeCount where length > 0 {
                let offset = UInt64.random(in: 0...(claim.contentSize - UInt64(length)), using: &random)
                items.append(.range(offset: offset, length: length))
            }
            // Distinct chunks, drawn uniformly without replacement.
            var chosen = Set<UInt32>()
            let wanted = min(policy.merkleChunkCount, Int(min(claim.chunkCount, UInt64(Int.max))))
            while chosen.count < wanted {
                chosen.insert(UInt32(truncatingIfNeeded: UInt64.random(in: 0..<claim.chunkCount, using: &random)))
            }
            items += chosen.sorted().map { .merkleChunk(index: $0) }
        }
        if items.isEmpty { items.append(.fullHash) }
        return items
    }

    /// A challenge with exactly `items` (tests choose questions the cheating prover cannot answer).
    func issueChallenge(items: [PossessionChallenge.Item]) throws(SecurityError) -> PossessionChallenge {
        let now = clock.wallDate()
        let key = try X25519.PrivateKey()
        let challenge = try PossessionChallenge(nonce: UUIDv7(date: now), verifierKey: key.publicKey, items: items)
        let entry = PossessionVerifierStateMachine.Pending(challenge: challenge, key: key, issuedAt: now)
        guard state.withLock({ $0.issue(entry, now: now) }) else {
            throw SecurityError(.limitExceeded, "\(Self.maximumPendingChallenges) challenges are outstanding")
        }
        return challenge
    }

    /// Accepts `response` or throws: `.replayDetected` for a nonce already answered, `.expired` for a response
    /// 15 s or more after its challenge, `.authenticationFailed` (one fixed message) for anything that does not
    /// decrypt or whose answers do not all match.
    public func verify(_ response: PossessionResponse) throws(SecurityError) {
        let now = clock.wallDate()
        let entry: PossessionVerifierStateMachine.Pending
        switch state.withLock({ $0.claim(response.nonce, now: now) }) {
        case .fresh(let pending): entry = pending
        case .replayed: throw SecurityError(.replayDetected, "this challenge was already answered")
        case .late: throw SecurityError(.expired, "the challenge expired before the response arrived")
        case .unknown: throw SecurityError.authenticationFailedError()
        }
        do {
            try check(response, against: entry)
        } catch {
            // Every failure below the freshness checks looks the same from outside.
            throw SecurityError.authenticationFailedError()
        }
    }

    func check(
        _ response: PossessionResponse, against entry: PossessionVerifierStateMachine.Pending
    ) throws(SecurityError) {
        let challenge = entry.challenge
        let shared = try entry.key.sharedSecret(with: response.proverKey)
        let keys = try PossessionTranscript.keys(
            shared: shared, nonce: challenge.nonce, claim: claim, verifierKey: challenge.verifierKey,
            proverKey: response.proverKey)
        let aad = PossessionResponse.associatedData(
            nonce: challenge.nonce, proverKey: response.proverKey, verifierKey: challenge.verifierKey)
        let answers = try AESGCM.openCombined(response.sealedAnswers, authenticating: aad, key: keys.encryption)
        var reader = PossessionWireReader(answers)
        guard try reader.take(4) == PossessionTranscript.answersMagic,
            try reader.integer(byteCount: 1) == UInt64(challenge.items.count)
        else { throw SecurityError.authenticationFailedError() }
        var allMatch = true
        for item in challenge.items {
            if case .merkleChunk(let index) = item {
                let chunkHash = try reader.digest()
                let proofBytes = try reader.take(Int(reader.integer(byteCount: 2)))
                guard let proof = try? MerkleProof(serialized: proofBytes) else {
                    throw SecurityError.authenticationFailedError()
                }
                let included =
                    proof.leafIndex == UInt64(index)
                    && proof.verify(chunkHash: chunkHash, root: claim.merkleRoot, leafCount: claim.chunkCount)
                // Without the stored chunk hashes a Merkle question cannot be checked: it fails.
                let stored = chunkHashes.flatMap { Int(index) < $0.count ? $0[Int(index)] : nil }
                allMatch = allMatch && included && (stored.map { $0 == chunkHash } ?? false)
            }
            let mac = try reader.digest()
            let expected = try PossessionTranscript.answer(
                item, nonce: challenge.nonce, key: keys.mac, source: source, claim: claim)
            allMatch = allMatch && mac == expected
        }
        try reader.finish()
        guard allMatch else { throw SecurityError.authenticationFailedError() }
    }
}
