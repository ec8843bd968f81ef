import AetherIO
import AetherSecurity
import Testing

@testable import AetherTransport

/// Ids that go on the wire come from the CSPRNG: one observed id must not predict the next.
@Suite struct AttemptIDGeneratorTests {
    /// The SplitMix64 output function, inverted: the state that produced `output`.
    static func splitMixState(producing output: UInt64) -> UInt64 {
        var z = unxorshift(output, 31)
        z &*= inverse(0x94D0_49BB_1331_11EB)
        z = unxorshift(z, 27)
        z &*= inverse(0xBF58_476D_1CE4_E5B9)
        return unxorshift(z, 30)
    }

    /// What SplitMix64 outputs after the step that produced `output`.
    static func splitMixSuccessor(of output: UInt64) -> UInt64 {
        var generator = SplitMix64(seed: splitMixState(producing: output))
        return generator.next()
    }

    private static func unxorshift(_ value: UInt64, _ shift: UInt64) -> UInt64 {
        var result = value
        for _ in 0..<(64 / shift + 1) { result = value ^ (result >> shift) }
        return result
    }

    /// The multiplicative inverse of an odd number modulo 2^64 (Newton's iteration).
    private static func inverse(_ odd: UInt64) -> UInt64 {
        var x = odd
        for _ in 0..<6 { x &*= 2 &- odd &* x }
        return x
    }

    @Test func theInversionPredictsASeededSequence() {
        // The predictor itself works: with a seed, every id follows from the one before.
        var generator = AttemptIDGenerator(seed: 42)
        var previous = generator.next().rawValue
        for _ in 0..<100 {
            let next = generator.next().rawValue
            #expect(Self.splitMixSuccessor(of: previous) == next)
            previous = next
        }
    }

    @Test func unseededIdsAreNotPredictableFromThePreviousOne() {
        var generator = AttemptIDGenerator(seed: nil)
        var previous = generator.next().rawValue
        var predicted = 0
        for _ in 0..<1_000 {
            let next = generator.next().rawValue
            if Self.splitMixSuccessor(of: previous) == next { predicted += 1 }
            previous = next
        }
        #expect(predicted == 0)
    }

    /// Session ids of 20 accepted and committed hellos from a table made with `seed`.
    private func sessionIDs(seed: UInt64?) throws -> [UInt64] {
        let device = HostID()
        let key = KeyID()
        var table = SessionTableStateMachine(
            keys: [SessionTableStateMachine.Key(keyID: key, device: device, state: .active)], seed: seed)
        var now = SessionTime(monotonic: 50_000, wall: 1_800_000_000_000)
        var ids: [UInt64] = []
        for _ in 0..<20 {
            now = now.advanced(by: 10)
            let hello = try Hello(intent: .connect, timestamp: now.wall, keyID: key, previousSessionID: 0)
            guard case .accept(let accept) = table.helloAuthenticated(hello, now: now) else {
                Issue.record("the hello was not accepted")
                return ids
            }
            ids.append(accept.sessionID)
            _ = table.recordOpened(accept.sessionID, .control(.confirm), now: now)
        }
        return ids
    }

    @Test func theHostsSessionIdsAreNotPredictableFromThePreviousOne() throws {
        let seeded = try sessionIDs(seed: 3)
        #expect(zip(seeded, seeded.dropFirst()).allSatisfy { Self.splitMixSuccessor(of: $0) == $1 })
        let production = try sessionIDs(seed: nil)
        #expect(production.count == 20)
        #expect(zip(production, production.dropFirst()).allSatisfy { Self.splitMixSuccessor(of: $0) != $1 })
    }
}
