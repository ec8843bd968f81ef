import AetherIO
import Testing

@testable import AetherIntegrity

@Suite struct ByzantineVerifierTests {
    @Test(arguments: [
        (0, 0), (1, 1), (2, 1), (3, 2), (10, 4), (16, 4), (17, 5), (1000, 10), (1001, 11), (4097, 21),
        (1_000_000, 317), (1_000_000_000, 10_000),
    ])
    func sampleCountIsTheLargerOfLog2AndRootOfATenth(_ n: Int, _ expected: Int) {
        #expect(ByzantineSampler.sampleCount(chunkCount: n) == expected)
    }

    @Test func samplesAreDistinctAndInRange() {
        var generator = SplitMix64(seed: 1)
        for population in [1, 2, 5, 100, 1_000_000] {
            let sample = ByzantineSampler.sample(40, from: population, using: &generator)
            #expect(sample.count == min(40, population))
            #expect(Set(sample).count == sample.count)
            #expect(sample.allSatisfy { (0..<population).contains($0) })
        }
        #expect(ByzantineSampler.sample(chunkCount: 4097).count == 21)
        #expect(ByzantineSampler.sample(chunkCount: 0).isEmpty)
    }

    /// Chi-square over 12 chunks, 3 sampled per draw, 60,000 draws: each chunk should be picked
    /// 15,000 times. With 11 degrees of freedom the 0.1% critical value is 31.26. The seed is
    /// fixed so the statistic is reproducible; a prefix or modulo-biased sampler fails by far.
    @Test func samplingIsUnbiasedByChiSquare() {
        var generator = SplitMix64(seed: 0x5EED)
        let population = 12
        let draws = 60_000
        var counts = [Int](repeating: 0, count: population)
        var firstPicks = [Int](repeating: 0, count: population)
        for _ in 0..<draws {
            let sample = ByzantineSampler.sample(3, from: population, using: &generator)
            for index in sample { counts[index] += 1 }
            firstPicks[sample[0]] += 1
        }
        func chiSquare(_ observed: [Int], expected: Double) -> Double {
            observed.reduce(0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
        }
        #expect(chiSquare(counts, expected: Double(draws * 3) / Double(population)) < 31.26)
        #expect(chiSquare(firstPicks, expected: Double(draws) / Double(population)) < 31.26)
    }

    @Test func theResponseIsHMACOfTheChunkUnderTheNonce() throws {
        let chunk = Array(0..<200).map { UInt8($0 & 0xFF) }
        let challenge = try ByzantineChallenge.fresh(chunkIndex: 3)
        #expect(challenge.nonce.count == 32)
        let expected = try HMACSHA256.authenticate(chunk, key: SecureBytes(copying: challenge.nonce))
        #expect(try challenge.response(chunk: chunk) == expected)
        let other = try ByzantineChallenge.fresh(chunkIndex: 3)
        #expect(other.nonce != challenge.nonce)
        #expect(try other.response(chunk: chunk) != expected)
        #expect(throws: IntegrityError.self) { try ByzantineChallenge(chunkIndex: 0, nonce: [1, 2]) }
    }

    @Test func aCorrectTimelyAnswerVerifies() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [2, 5], clock: clock)
        let chunk: [UInt8] = Array(repeating: 9, count: 64)
        #expect(!verifier.acknowledged(chunk: 1))
        #expect(verifier.acknowledged(chunk: 2))
        #expect(!verifier.acknowledged(chunk: 2))  // acknowledged twice: one challenge only
        clock.advance(by: .milliseconds(100))
        let challenge = try verifier.challenge(chunk: 2, contents: chunk)
        clock.advance(by: .milliseconds(500))
        #expect(verifier.receive(chunk: 2, response: try challenge.response(chunk: chunk)) == .verified(chunk: 2))
        #expect(verifier.verifiedCount == 1)
        #expect(verifier.strikes == 0)
    }

    @Test func aChallengeLaterThan100msAfterTheACKIsDroppedWithoutAStrike() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [2], clock: clock)
        #expect(verifier.acknowledged(chunk: 2))
        clock.advance(by: .milliseconds(101))
        #expect {
            try verifier.challenge(chunk: 2, contents: [1, 2, 3])
        } throws: { ($0 as? IntegrityError)?.code == .challengeWindowMissed }
        #expect(verifier.strikes == 0)
    }

    @Test func lateWrongAndUnsolicitedAnswersAreStrikesAndThreeMeanUntrusted() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [0, 1, 2, 3], clock: clock)
        let chunk: [UInt8] = [1, 2, 3, 4]
        for index in 0..<2 { #expect(verifier.acknowledged(chunk: index)) }
        let c0 = try verifier.challenge(chunk: 0, contents: chunk)
        let c1 = try verifier.challenge(chunk: 1, contents: chunk)
        clock.advance(by: .milliseconds(501))
        #expect(
            verifier.receive(chunk: 0, response: try c0.response(chunk: chunk))
                == .strike(chunk: 0, reason: .timeout, strikes: 1))
        _ = c1
        #expect(
            verifier.receive(chunk: 9, response: .zero) == .strike(chunk: 9, reason: .unexpectedResponse, strikes: 2))
        #expect(!verifier.isUntrusted)
        #expect(verifier.acknowledged(chunk: 2))
        #expect(verifier.acknowledged(chunk: 3))
        let c2 = try verifier.challenge(chunk: 2, contents: chunk)
        _ = c2
        #expect(verifier.receive(chunk: 2, response: try c0.response(chunk: chunk)) == .untrusted)
        #expect(verifier.isUntrusted)
        #expect(verifier.strikes == 3)
        // Fail closed from now on: even a right answer does not restore trust.
        #expect(throws: IntegrityError.self) { try verifier.challenge(chunk: 3, contents: chunk) }
        #expect(verifier.receive(chunk: 1, response: try c1.response(chunk: chunk)) == .untrusted)
    }

    @Test func unansweredChallengesExpireAfter500ms() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [4, 8], clock: clock)
        #expect(verifier.acknowledged(chunk: 4))
        _ = try verifier.challenge(chunk: 4, contents: [0])
        clock.advance(by: .milliseconds(500))
        #expect(verifier.expireOverdue().isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(verifier.expireOverdue() == [.strike(chunk: 4, reason: .timeout, strikes: 1)])
        #expect(verifier.expireOverdue().isEmpty)
    }

    @Test func theDefaultVerifierSamplesWithTheCSPRNG() {
        let verifier = ByzantineVerifier(chunkCount: 1000, clock: ManualClock())
        #expect(verifier.sampledChunks.count == 10)
        #expect(Set(verifier.sampledChunks).count == 10)
    }
}
