import AetherIO
import AetherIntegrity
import Foundation
import Testing

@testable import AetherSecurity

/// A source that returns the real bytes for `known` and zeros elsewhere: a prover who holds only part of the
/// file (or, with an empty range, only its hashes).
struct PartialSource: PossessionSource {
    let real: InMemoryPossessionSource
    let known: Range<UInt64>

    var size: UInt64 { real.size }

    func read(offset: UInt64, count: Int) throws(SecurityError) -> [UInt8] {
        var bytes = try real.read(offset: offset, count: count)
        for index in bytes.indices where !known.contains(offset + UInt64(index)) { bytes[index] = 0 }
        return bytes
    }
}

@Suite struct ProofOfPossessionTests {
    static let chunkSize: UInt32 = 16 * 1024
    static let content: [UInt8] = SecureRandom.bytes(100_000)
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    struct Setup {
        let clock = ManualClock(ProofOfPossessionTests.start)
        let source = InMemoryPossessionSource(ProofOfPossessionTests.content)
        let hashes: [Digest32]
        let verifier: ProofOfPossessionVerifier

        init(policy: PossessionPolicy = .init()) throws {
            hashes = try ProofOfPossessionProver.chunkHashes(of: source, chunkSize: ProofOfPossessionTests.chunkSize)
            verifier = try ProofOfPossessionVerifier(
                source: source, chunkSize: ProofOfPossessionTests.chunkSize, chunkHashes: hashes, policy: policy,
                clock: clock)
        }

        func prover(_ source: any PossessionSource) throws -> ProofOfPossessionProver {
            try ProofOfPossessionProver(
                source: source, chunkSize: ProofOfPossessionTests.chunkSize, chunkHashes: hashes)
        }
    }

    @Test func anHonestProverPasses() throws {
        let setup = try Setup()
        let prover = try setup.prover(setup.source)
        #expect(prover.claim == setup.verifier.claim)
        #expect(prover.claim.chunkCount == 7)
        #expect(prover.claim.merkleRoot == (try MerkleProofBuilder(chunkHashes: setup.hashes).root))
        for _ in 0..<5 {
            let challenge = try setup.verifier.issueChallenge()
            #expect(challenge.items.first == .fullHash)
            #expect(challenge.items.count == 7)
            // Over the wire and back.
            let parsedChallenge = try PossessionChallenge(serialized: challenge.serialized)
            #expect(parsedChallenge == challenge)
            let response = try prover.respond(to: parsedChallenge)
            try setup.verifier.verify(PossessionResponse(serialized: response.serialized))
        }
        #expect(setup.verifier.pendingChallengeCount == 0)
    }

    @Test func aProverHoldingOnlyTheHashesFails() throws {
        let setup = try Setup()
        // It knows every chunk hash (so its Merkle proofs are valid) but none of the bytes.
        let cheat = try setup.prover(PartialSource(real: setup.source, known: 0..<0))
        for items: [PossessionChallenge.Item] in [
            [.fullHash], [.range(offset: 10, length: 100)], [.merkleChunk(index: 3)],
            [.fullHash, .range(offset: 0, length: 4096), .merkleChunk(index: 0)],
        ] {
            let challenge = try setup.verifier.issueChallenge(items: items)
            let error = #expect(throws: SecurityError.self) { try setup.verifier.verify(cheat.respond(to: challenge)) }
            #expect(error?.code == .authenticationFailed)
        }
    }

    @Test func aRawSHA256OfTheFileIsNotAnAnswer() throws {
        // What a hash-only prover can send for the full-hash question: the file's SHA-256, correctly sealed.
        let setup = try Setup()
        let challenge = try setup.verifier.issueChallenge(items: [.fullHash])
        let ephemeral = try X25519.PrivateKey()
        let keys = try PossessionTranscript.keys(
            shared: ephemeral.sharedSecret(with: challenge.verifierKey), nonce: challenge.nonce,
            claim: setup.verifier.claim, verifierKey: challenge.verifierKey, proverKey: ephemeral.publicKey)
        let answers = PossessionTranscript.answersMagic + [1] + SHA256.hash(Self.content).bytes
        let aad = PossessionResponse.associatedData(
            nonce: challenge.nonce, proverKey: ephemeral.publicKey, verifierKey: challenge.verifierKey)
        let response = try PossessionResponse(
            nonce: challenge.nonce, proverKey: ephemeral.publicKey,
            sealedAnswers: AESGCM.sealCombined(answers, authenticating: aad, key: keys.encryption))
        let error = #expect(throws: SecurityError.self) { try setup.verifier.verify(response) }
        #expect(error?.code == .authenticationFailed)
    }

    /// Seals hand-made answers for `challenge` as a prover would.
    func respond(
        to challenge: PossessionChallenge, claim: PossessionClaim,
        answers: (PossessionTranscript.Keys) throws -> [UInt8]
    ) throws -> PossessionResponse {
        let ephemeral = try X25519.PrivateKey()
        let keys = try PossessionTranscript.keys(
            shared: ephemeral.sharedSecret(with: challenge.verifierKey), nonce: challenge.nonce, claim: claim,
            verifierKey: challenge.verifierKey, proverKey: ephemeral.publicKey)
        let aad = PossessionResponse.associatedData(
            nonce: challenge.nonce, proverKey: ephemeral.publicKey, verifierKey: challenge.verifierKey)
        return try PossessionResponse(
            nonce: challenge.nonce, proverKey: ephemeral.publicKey,
            sealedAnswers: AESGCM.sealCombined(answers(keys), authenticating: aad, key: keys.encryption))
    }

    @Test func aChunkAnswerNeedsTheRightChunkHashAndInclusionProof() throws {
        let setup = try Setup()
        let builder = try MerkleProofBuilder(chunkHashes: setup.hashes)
        // Correct MAC over the chunk's bytes each time; only the hash or the proof is wrong.
        for (hash, proof) in [
            (setup.hashes[2], try builder.proof(forLeaf: 3)),  // another leaf's proof
            (setup.hashes[3], try builder.proof(forLeaf: 2)),  // another leaf's hash with its own proof
            (SHA256.hash([1, 2, 3]), try builder.proof(forLeaf: 2)),
        ] {
            let challenge = try setup.verifier.issueChallenge(items: [.merkleChunk(index: 2)])
            let response = try respond(to: challenge, claim: setup.verifier.claim) { keys in
                let mac = try PossessionTranscript.answer(
                    .merkleChunk(index: 2), nonce: challenge.nonce, key: keys.mac, source: setup.source,
                    claim: setup.verifier.claim)
                let encoded = proof.serialized()
                return PossessionTranscript.answersMagic + [1] + hash.bytes
                    + [UInt8(encoded.count >> 8), UInt8(encoded.count & 0xFF)] + encoded + mac.bytes
            }
            let error = #expect(throws: SecurityError.self) { try setup.verifier.verify(response) }
            #expect(error?.code == .authenticationFailed)
        }
        // The same construction with the right hash and proof passes, so the rejections above are about them.
        let challenge = try setup.verifier.issueChallenge(items: [.merkleChunk(index: 2)])
        let response = try respond(to: challenge, claim: setup.verifier.claim) { keys in
            let mac = try PossessionTranscript.answer(
                .merkleChunk(index: 2), nonce: challenge.nonce, key: keys.mac, source: setup.source,
                claim: setup.verifier.claim)
            let encoded = try builder.proof(forLeaf: 2).serialized()
            return PossessionTranscript.answersMagic + [1] + setup.hashes[2].bytes
                + [UInt8(encoded.count >> 8), UInt8(encoded.count & 0xFF)] + encoded + mac.bytes
        }
        try setup.verifier.verify(response)
    }

    @Test func aProverHoldingPartOfTheFileFailsWhereItLacksBytes() throws {
        let setup = try Setup()
        let half = try setup.prover(PartialSource(real: setup.source, known: 0..<50_000))
        // Questions about the half it holds are answered ...
        let easy = try setup.verifier.issueChallenge(items: [.range(offset: 100, length: 4096), .merkleChunk(index: 1)])
        try setup.verifier.verify(half.respond(to: easy))
        // ... but the full hash, a range or a chunk in the missing half are not.
        for items: [PossessionChallenge.Item] in [
            [.fullHash], [.range(offset: 60_000, length: 4096)], [.merkleChunk(index: 5)],
            [.range(offset: 49_000, length: 4096)],
        ] {
            let challenge = try setup.verifier.issueChallenge(items: items)
            let error = #expect(throws: SecurityError.self) { try setup.verifier.verify(half.respond(to: challenge)) }
            #expect(error?.code == .authenticationFailed)
        }
        // A random default challenge always contains the full hash, so it fails too.
        let random = try setup.verifier.issueChallenge()
        #expect(throws: SecurityError.self) { try setup.verifier.verify(half.respond(to: random)) }
    }

    @Test func aReplayedResponseIsRejected() throws {
        let setup = try Setup()
        let prover = try setup.prover(setup.source)
        let challenge = try setup.verifier.issueChallenge()
        let response = try prover.respond(to: challenge)
        try setup.verifier.verify(response)
        let replay = #expect(throws: SecurityError.self) { try setup.verifier.verify(response) }
        #expect(replay?.code == .replayDetected)

        // An old response moved onto a new challenge's nonce does not open under the new keys.
        let next = try setup.verifier.issueChallenge(items: challenge.items)
        let moved = try PossessionResponse(
            nonce: next.nonce, proverKey: response.proverKey, sealedAnswers: response.sealedAnswers)
        let error = #expect(throws: SecurityError.self) { try setup.verifier.verify(moved) }
        #expect(error?.code == .authenticationFailed)
        // And that failed attempt consumed the new nonce: a correct answer after it is a replay.
        #expect(throws: SecurityError.self) { try setup.verifier.verify(prover.respond(to: next)) }
    }

    @Test func aResponseFifteenSecondsLateIsRejected() throws {
        let setup = try Setup()
        let prover = try setup.prover(setup.source)
        let onTime = try setup.verifier.issueChallenge()
        setup.clock.advance(by: .milliseconds(14_999))
        try setup.verifier.verify(prover.respond(to: onTime))

        let late = try setup.verifier.issueChallenge()
        let response = try prover.respond(to: late)
        setup.clock.advance(by: .seconds(15))
        let error = #expect(throws: SecurityError.self) { try setup.verifier.verify(response) }
        #expect(error?.code == .expired)
        // Even much later, after the verifier forgot the nonce, the answer is refused.
        setup.clock.advance(by: .seconds(3600))
        let again = #expect(throws: SecurityError.self) { try setup.verifier.verify(response) }
        #expect(again?.code == .expired)
    }

    @Test func tamperedOrForeignResponsesFailWithTheOneError() throws {
        let setup = try Setup()
        let prover = try setup.prover(setup.source)
        let challenge = try setup.verifier.issueChallenge()
        let response = try prover.respond(to: challenge)
        for index in [0, 12, response.sealedAnswers.count / 2, response.sealedAnswers.count - 1] {
            var sealed = response.sealedAnswers
            sealed[index] ^= 0x20
            let fresh = try setup.verifier.issueChallenge(items: challenge.items)
            let honest = try prover.respond(to: fresh)
            let tampered = try PossessionResponse(
                nonce: fresh.nonce, proverKey: honest.proverKey, sealedAnswers: sealed)
            let error = #expect(throws: SecurityError.self) { try setup.verifier.verify(tampered) }
            #expect(error?.code == .authenticationFailed)
        }
        // A nonce the verifier never issued.
        let forged = try PossessionResponse(
            nonce: UUIDv7(date: Self.start), proverKey: response.proverKey, sealedAnswers: response.sealedAnswers)
        #expect(throws: SecurityError.self) { try setup.verifier.verify(forged) }
        // A prover of different content (another claim) cannot answer either.
        var other = Self.content
        other[0] ^= 1
        let otherSource = InMemoryPossessionSource(other)
        let otherProver = try ProofOfPossessionProver(
            source: otherSource, chunkSize: Self.chunkSize,
            chunkHashes: ProofOfPossessionProver.chunkHashes(of: otherSource, chunkSize: Self.chunkSize))
        let next = try setup.verifier.issueChallenge(items: [.merkleChunk(index: 6)])
        #expect(throws: SecurityError.self) { try setup.verifier.verify(otherProver.respond(to: next)) }
    }

    @Test func wireFormsAreStrict() throws {
        let setup = try Setup()
        let challenge = try setup.verifier.issueChallenge()
        let bytes = challenge.serialized
        for bad in [Array(bytes.dropLast()), bytes + [0], [UInt8](), Array("APC2".utf8) + bytes.dropFirst(4)] {
            #expect(throws: SecurityError.self) { try PossessionChallenge(serialized: bad) }
        }
        let response = try setup.prover(setup.source).respond(to: challenge)
        #expect(try PossessionResponse(serialized: response.serialized) == response)
        #expect(throws: SecurityError.self) {
            try PossessionResponse(serialized: Array(response.serialized.prefix(60)))
        }
        // A challenge naming a chunk or range outside the content is refused by the prover.
        let outside = try PossessionChallenge(
            nonce: challenge.nonce, verifierKey: challenge.verifierKey, items: [.merkleChunk(index: 7)])
        #expect(throws: SecurityError.self) { try setup.prover(setup.source).respond(to: outside) }
        let beyond = try PossessionChallenge(
            nonce: challenge.nonce, verifierKey: challenge.verifierKey, items: [.range(offset: 99_999, length: 2)])
        #expect(throws: SecurityError.self) { try setup.prover(setup.source).respond(to: beyond) }
        #expect(throws: SecurityError.self) {
            try PossessionChallenge(nonce: challenge.nonce, verifierKey: challenge.verifierKey, items: [])
        }
    }

    @Test func challengeNoncesAreUUIDv7CarryingTheIssueTime() throws {
        let nonce = UUIDv7(date: Self.start)
        #expect(nonce.bytes[6] >> 4 == 7)
        #expect(nonce.bytes[8] >> 6 == 0b10)
        #expect(nonce.milliseconds == 1_800_000_000_000)
        #expect(nonce != UUIDv7(date: Self.start))
        #expect("\(nonce)".count == 36)
        #expect("\(nonce)".hasPrefix("01a3185c-5000-7"))
        var version4 = nonce.bytes
        version4[6] = 0x40 | (version4[6] & 0x0F)
        #expect(throws: SecurityError.self) { try UUIDv7(bytes: version4) }
    }

    /// A source that counts the bytes read from it.
    final class CountingSource: PossessionSource, @unchecked Sendable {
        // @unchecked: the count is only touched under the lock.
        let inner: InMemoryPossessionSource
        private let lock = NSLock()
        private var read = 0
        init(_ inner: InMemoryPossessionSource) { self.inner = inner }
        var size: UInt64 { inner.size }
        var bytesRead: Int { lock.withLock { read } }
        func read(offset: UInt64, count: Int) throws(SecurityError) -> [UInt8] {
            lock.withLock { read += count }
            return try inner.read(offset: offset, count: count)
        }
    }

    static let rangesOnly = PossessionPolicy(
        includeFullHash: false, rangeCount: 8, rangeLength: 4096, merkleChunkCount: 0)

    @Test func aVerifierMadeFromTheClaimReadsOnlyTheRangesItAsks() throws {
        let setup = try Setup()
        let source = CountingSource(setup.source)
        let verifier = try ProofOfPossessionVerifier(
            source: source, claim: setup.verifier.claim, policy: Self.rangesOnly, clock: setup.clock)
        #expect(source.bytesRead == 0)
        let honest = try setup.prover(setup.source)
        let challenge = try verifier.issueChallenge()
        #expect(challenge.items.count == 8)
        #expect(challenge.items.allSatisfy { if case .range(_, 4096) = $0 { true } else { false } })
        try verifier.verify(honest.respond(to: challenge))
        #expect(source.bytesRead == 8 * 4096)
        // Bytes that differ in one of the asked ranges fail; a prover claiming another root fails too.
        guard case .range(let offset, _) = challenge.items[0] else { return }
        let holes = try setup.prover(PartialSource(real: setup.source, known: 0..<offset))
        let second = try verifier.issueChallenge(items: [.range(offset: offset, length: 4096)])
        #expect(throws: SecurityError.self) { try verifier.verify(holes.respond(to: second)) }
        var other = Self.content
        other[0] ^= 1
        let otherSource = InMemoryPossessionSource(other)
        let foreign = try ProofOfPossessionProver(
            source: otherSource, chunkSize: Self.chunkSize,
            chunkHashes: try ProofOfPossessionProver.chunkHashes(of: otherSource, chunkSize: Self.chunkSize))
        let third = try verifier.issueChallenge()
        #expect(throws: SecurityError.self) { try verifier.verify(foreign.respond(to: third)) }
    }

    @Test func aVerifierWithoutChunkHashesRefusesMerkleQuestionsAndClaimsOfOtherContent() throws {
        let setup = try Setup()
        #expect(throws: SecurityError.self) {
            _ = try ProofOfPossessionVerifier(source: setup.source, claim: setup.verifier.claim, policy: .init())
        }
        let claim = setup.verifier.claim
        let wrongSize = PossessionClaim(
            contentSize: claim.contentSize + 1, chunkSize: claim.chunkSize, chunkCount: claim.chunkCount,
            merkleRoot: claim.merkleRoot)
        #expect(throws: SecurityError.self) {
            _ = try ProofOfPossessionVerifier(source: setup.source, claim: wrongSize, policy: Self.rangesOnly)
        }
        // A Merkle question (from a challenge issued elsewhere) cannot be checked without the hashes: it fails.
        let verifier = try ProofOfPossessionVerifier(
            source: setup.source, claim: claim, policy: Self.rangesOnly, clock: setup.clock)
        let challenge = try verifier.issueChallenge(items: [.merkleChunk(index: 1)])
        let error = #expect(throws: SecurityError.self) {
            try verifier.verify(setup.prover(setup.source).respond(to: challenge))
        }
        #expect(error?.code == .authenticationFailed)
    }
}
