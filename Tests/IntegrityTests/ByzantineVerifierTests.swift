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

    static let id = Array("abcdefghijklmnopqrstuvwx23".utf8)

    static func item(_ index: Int, _ offset: Int64 = 0, _ length: Int64 = 4) throws -> ByzantineChallenge.Item {
        try ByzantineChallenge.Item(index: index, offset: offset, length: length)
    }

    @Test func theResponseIsTheHMACOfTheTaggedRangeUnderTheNonce() throws {
        let range = Array(0..<200).map { UInt8($0 & 0xFF) }
        let item = try Self.item(3, 1000, 200)
        let challenge = try ByzantineChallenge.fresh(uploadID: Self.id, items: [item])
        #expect(challenge.nonce.count == 32)
        // The message, built here by hand: u8 len(tag) || tag || u8 len(id) || id || be64 index, offset, length.
        let tag = Array("aether/byzantine-challenge/v2".utf8)
        var message = [UInt8(tag.count)] + tag + [UInt8(Self.id.count)] + Self.id
        message += [0, 0, 0, 0, 0, 0, 0, 3] + [0, 0, 0, 0, 0, 0, 0x03, 0xE8] + [0, 0, 0, 0, 0, 0, 0, 200]
        let expected = try HMACSHA256.authenticate(message + range, key: SecureBytes(copying: challenge.nonce))
        #expect(try challenge.response(for: item, bytes: range) == expected)
        #expect(try unsafe range.withUnsafeBytes { try unsafe challenge.response(for: item, bytes: $0) } == expected)
        // Bytes alone do not make the answer: a keyed hash of the chunk, another nonce, index, range or upload differ.
        #expect(try HMACSHA256.authenticate(range, key: SecureBytes(copying: challenge.nonce)) != expected)
        let other = try ByzantineChallenge.fresh(uploadID: Self.id, items: [item])
        #expect(try other.response(for: item, bytes: range) != expected)
        let moved = try ByzantineChallenge(
            uploadID: Self.id, items: [try Self.item(4, 1000, 200)], nonce: challenge.nonce)
        #expect(try moved.response(for: moved.items[0], bytes: range) != expected)
        let shifted = try ByzantineChallenge(
            uploadID: Self.id, items: [try Self.item(3, 1001, 200)], nonce: challenge.nonce)
        #expect(try shifted.response(for: shifted.items[0], bytes: range) != expected)
        let elsewhere = try ByzantineChallenge(uploadID: Array("other".utf8), items: [item], nonce: challenge.nonce)
        #expect(try elsewhere.response(for: item, bytes: range) != expected)
        // The bytes must be exactly the range.
        #expect(throws: IntegrityError.self) { try challenge.response(for: item, bytes: Array(range.dropLast())) }
        #expect(throws: IntegrityError.self) {
            try ByzantineChallenge(uploadID: Self.id, items: [item], nonce: [1, 2])
        }
        #expect(throws: IntegrityError.self) {
            try ByzantineChallenge(uploadID: [], items: [item], nonce: challenge.nonce)
        }
        #expect(throws: IntegrityError.self) {
            try ByzantineChallenge(uploadID: Self.id, items: [item, item], nonce: challenge.nonce)
        }
        #expect(throws: IntegrityError.self) { try ByzantineChallenge.Item(index: 0, offset: -1, length: 1) }
    }

    @Test func aCorrectTimelyAnswerVerifies() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [2, 5], clock: clock)
        let bytes: [UInt8] = Array(repeating: 9, count: 4)
        #expect(verifier.pendingChunks == [2, 5])
        let prepared = try verifier.prepare(uploadID: Self.id, items: [try Self.item(2)], bytes: [bytes])
        #expect(!verifier.acknowledged(chunk: 1))
        #expect(verifier.acknowledged(chunk: 2))
        #expect(!verifier.acknowledged(chunk: 2))  // acknowledged twice: one challenge only
        clock.advance(by: .milliseconds(100))
        let challenge = try verifier.issue(prepared)
        #expect(verifier.pendingChunks == [5])
        clock.advance(by: .milliseconds(500))
        let answer = try challenge.response(for: challenge.items[0], bytes: bytes)
        #expect(verifier.receive(challenge, responses: [answer]) == .verified(chunks: [2]))
        #expect(verifier.verifiedCount == 1 && verifier.strikes == 0)
        #expect(!verifier.passed)  // chunk 5 is not checked yet
    }

    @Test func aChallengeLaterThan100msAfterTheACKIsDroppedWithoutAStrikeAndTheChunkWaitsAgain() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [2], clock: clock)
        let prepared = try verifier.prepare(uploadID: Self.id, items: [try Self.item(2)], bytes: [[1, 2, 3, 4]])
        #expect(verifier.acknowledged(chunk: 2))
        clock.advance(by: .milliseconds(101))
        #expect {
            try verifier.issue(prepared)
        } throws: { ($0 as? IntegrityError)?.code == .challengeWindowMissed }
        #expect(verifier.strikes == 0 && verifier.missedWindows == 1)
        #expect(verifier.pendingChunks == [2])
        // A fresh acknowledgement and a fresh challenge go through.
        let again = try verifier.prepare(uploadID: Self.id, items: [try Self.item(2)], bytes: [[1, 2, 3, 4]])
        #expect(verifier.acknowledged(chunk: 2))
        let challenge = try verifier.issue(again)
        let answer = try challenge.response(for: challenge.items[0], bytes: [1, 2, 3, 4])
        #expect(verifier.receive(challenge, responses: [answer]) == .verified(chunks: [2]))
        #expect(verifier.passed)
        // An unacknowledged chunk cannot be challenged.
        let unacknowledged = ByzantineVerifier(sampledChunks: [1], clock: clock)
        let early = try unacknowledged.prepare(uploadID: Self.id, items: [try Self.item(1)], bytes: [[0, 0, 0, 0]])
        #expect(throws: IntegrityError.self) { try unacknowledged.issue(early) }
    }

    @Test func wrongLateAndUnsolicitedAnswersAreStrikesAndThreeMeanUntrusted() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [0, 1, 2, 3], clock: clock)
        let bytes: [UInt8] = [1, 2, 3, 4]
        func issued(_ chunks: [Int]) throws -> ByzantineChallenge {
            let prepared = try verifier.prepare(
                uploadID: Self.id, items: try chunks.map { try Self.item($0) }, bytes: chunks.map { _ in bytes })
            for chunk in chunks { #expect(verifier.acknowledged(chunk: chunk)) }
            return try verifier.issue(prepared)
        }
        // Late: a strike, and the chunks wait to be checked again.
        let late = try issued([0, 1])
        clock.advance(by: .milliseconds(501))
        let lateAnswers = try late.items.map { try late.response(for: $0, bytes: bytes) }
        #expect(
            verifier.receive(late, responses: lateAnswers) == .strike(chunks: [0, 1], reason: .timeout, strikes: 1))
        #expect(verifier.pendingChunks == [0, 1, 2, 3])
        // Half wrong (the MAC of other bytes): the right one is verified, the wrong one failed for good.
        let mixed = try issued([0, 1])
        let right = try mixed.response(for: mixed.items[0], bytes: bytes)
        let wrong = try mixed.response(for: mixed.items[1], bytes: [9, 9, 9, 9])
        #expect(
            verifier.receive(mixed, responses: [right, wrong])
                == .strike(chunks: [1], reason: .wrongResponse, strikes: 2))
        #expect(verifier.failedChunks == [1] && verifier.verifiedCount == 1)
        #expect(verifier.pendingChunks == [2, 3])
        #expect(!verifier.isUntrusted)
        // Answering a judged challenge again is unsolicited: the third strike.
        #expect(verifier.receive(mixed, responses: [right, right]) == .untrusted)
        #expect(verifier.isUntrusted && verifier.strikes == 3 && !verifier.passed)
        // Fail closed from now on: nothing is issued, and even a right answer does not restore trust.
        let prepared = try verifier.prepare(uploadID: Self.id, items: [try Self.item(2)], bytes: [bytes])
        #expect(!verifier.acknowledged(chunk: 2))
        #expect(throws: IntegrityError.self) { try verifier.issue(prepared) }
    }

    @Test func aMissingAnswerOrOneRefusedBeforeJudgingFailsItsChunks() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [4, 8], clock: clock)
        let prepared = try verifier.prepare(
            uploadID: Self.id, items: [try Self.item(4), try Self.item(8)], bytes: [[0, 0, 0, 0], [1, 1, 1, 1]])
        #expect(verifier.acknowledged(chunk: 4) && verifier.acknowledged(chunk: 8))
        let challenge = try verifier.issue(prepared)
        let answer = try challenge.response(for: challenge.items[0], bytes: [0, 0, 0, 0])
        // The server says it does not hold chunk 8.
        #expect(
            verifier.receive(challenge, responses: [answer, nil])
                == .strike(chunks: [8], reason: .wrongResponse, strikes: 1))
        let other = ByzantineVerifier(sampledChunks: [4], clock: clock)
        let refused = try other.prepare(uploadID: Self.id, items: [try Self.item(4)], bytes: [[0, 0, 0, 0]])
        #expect(other.acknowledged(chunk: 4))
        #expect(other.reject(try other.issue(refused)) == .strike(chunks: [4], reason: .wrongResponse, strikes: 1))
        #expect(other.failedChunks == [4] && other.pendingChunks.isEmpty && !other.passed)
    }

    @Test func aWithdrawnChallengeCostsNoStrikeAndItsAnswerIsUnsolicited() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [6], clock: clock)
        let prepared = try verifier.prepare(uploadID: Self.id, items: [try Self.item(6)], bytes: [[6, 6, 6, 6]])
        #expect(verifier.acknowledged(chunk: 6))
        let challenge = try verifier.issue(prepared)
        verifier.withdraw(challenge)
        #expect(verifier.strikes == 0 && verifier.pendingChunks == [6])
        let answer = try challenge.response(for: challenge.items[0], bytes: [6, 6, 6, 6])
        #expect(
            verifier.receive(challenge, responses: [answer])
                == .strike(chunks: [], reason: .unexpectedResponse, strikes: 1))
    }

    @Test func unansweredChallengesExpireAfter500msAndTheirChunksWaitAgain() throws {
        let clock = ManualClock()
        let verifier = ByzantineVerifier(sampledChunks: [4, 8], clock: clock)
        let prepared = try verifier.prepare(uploadID: Self.id, items: [try Self.item(4)], bytes: [[0, 0, 0, 0]])
        #expect(verifier.acknowledged(chunk: 4))
        _ = try verifier.issue(prepared)
        clock.advance(by: .milliseconds(500))
        #expect(verifier.expireOverdue().isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(verifier.expireOverdue() == [.strike(chunks: [4], reason: .timeout, strikes: 1)])
        #expect(verifier.expireOverdue().isEmpty)
        #expect(verifier.pendingChunks == [4, 8])
    }

    @Test func theDefaultVerifierSamplesWithTheCSPRNG() {
        let verifier = ByzantineVerifier(chunkCount: 1000, clock: ManualClock())
        #expect(verifier.sampledChunks.count == 10)
        #expect(Set(verifier.sampledChunks).count == 10)
    }
}
