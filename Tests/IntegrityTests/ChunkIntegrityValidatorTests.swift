import AetherIO
import AetherTestSupport
import Testing

@testable import AetherIntegrity

@Suite struct ChunkIntegrityValidatorTests {
    private static let configuration = ChunkIntegrityValidator.Configuration(
        skewWindowMilliseconds: 30_000, bucketWidthMilliseconds: 1_000, maximumNonces: 100, maximumSessions: 4)

    private func nonce(_ n: Int) -> [UInt8] { SHA256.hash(Array("nonce-\(n)".utf8)).bytes }

    private func code(_ body: () throws(IntegrityError) -> Void) -> IntegrityError.Code? {
        do { try body() } catch { return error.code }
        return nil
    }

    @Test func timestampsAreAcceptedWithinTheSkewOnEitherSide() throws {
        let clock = ManualClock(wall: .milliseconds(1_000_000))
        let validator = try ChunkIntegrityValidator(configuration: Self.configuration, clock: clock)
        try validator.validate(sessionID: "a", counter: 1, timestampMilliseconds: 1_030_000, nonce: nonce(1))
        try validator.validate(sessionID: "a", counter: 2, timestampMilliseconds: 970_000, nonce: nonce(2))
        #expect(
            code { () throws(IntegrityError) in
                try validator.validate(sessionID: "a", counter: 3, timestampMilliseconds: 1_030_001, nonce: nonce(3))
            } == .timestampOutOfWindow)
        #expect(
            code { () throws(IntegrityError) in
                try validator.validate(sessionID: "a", counter: 3, timestampMilliseconds: 969_999, nonce: nonce(3))
            } == .timestampOutOfWindow)
        #expect(
            code { () throws(IntegrityError) in
                try validator.validate(sessionID: "a", counter: 3, timestampMilliseconds: .min, nonce: nonce(3))
            } == .timestampOutOfWindow)
    }

    @Test func countersMustStrictlyIncreasePerSession() throws {
        let clock = ManualClock(wall: .milliseconds(0))
        let validator = try ChunkIntegrityValidator(configuration: Self.configuration, clock: clock)
        try validator.validate(sessionID: "a", counter: 5, timestampMilliseconds: 0, nonce: nonce(1))
        try validator.validate(sessionID: "b", counter: 1, timestampMilliseconds: 0, nonce: nonce(2))
        #expect(
            code { () throws(IntegrityError) in
                try validator.validate(sessionID: "a", counter: 5, timestampMilliseconds: 0, nonce: nonce(3))
            } == .replayDetected)
        #expect(
            code { () throws(IntegrityError) in
                try validator.validate(sessionID: "a", counter: 4, timestampMilliseconds: 0, nonce: nonce(3))
            } == .replayDetected)
        // The refused message recorded nothing: its nonce is still fresh.
        try validator.validate(sessionID: "a", counter: 6, timestampMilliseconds: 0, nonce: nonce(3))
    }

    @Test func aNonceIsRefusedAgainEvenWithAnotherTimestampOrSession() throws {
        let clock = ManualClock(wall: .milliseconds(100_000))
        let validator = try ChunkIntegrityValidator(configuration: Self.configuration, clock: clock)
        try validator.validate(sessionID: "a", counter: 1, timestampMilliseconds: 100_000, nonce: nonce(7))
        for (session, timestamp) in [("a", Int64(100_500)), ("b", Int64(80_000)), ("c", Int64(129_000))] {
            #expect(
                code { () throws(IntegrityError) in
                    try validator.validate(
                        sessionID: session, counter: 9, timestampMilliseconds: timestamp, nonce: nonce(7))
                } == .replayDetected)
        }
    }

    @Test func expiredBucketsAreDroppedOnceTheirTimestampsCannotBeAccepted() throws {
        let clock = ManualClock(wall: .milliseconds(0))
        let validator = try ChunkIntegrityValidator(configuration: Self.configuration, clock: clock)
        try validator.validate(sessionID: "a", counter: 1, timestampMilliseconds: 0, nonce: nonce(1))
        clock.setWall(.milliseconds(30_999))
        #expect(validator.storedNonceCount == 1)
        clock.setWall(.milliseconds(31_000))
        #expect(validator.storedNonceCount == 0)
        // The old message itself is now outside the window, so forgetting its nonce opened nothing.
        #expect(
            code { () throws(IntegrityError) in
                try validator.validate(sessionID: "a", counter: 2, timestampMilliseconds: 0, nonce: nonce(1))
            } == .timestampOutOfWindow)
    }

    @Test func aFloodOfNoncesStaysBoundedAndFailsClosed() throws {
        let clock = ManualClock(wall: .milliseconds(0))
        let validator = try ChunkIntegrityValidator(configuration: Self.configuration, clock: clock)
        var refused = 0
        var counter: UInt64 = 0
        for n in 0..<5_000 {
            counter += 1
            clock.setWall(.milliseconds(Int64(n)))  // 5 s of traffic, all within the window
            do {
                try validator.validate(
                    sessionID: "a", counter: counter, timestampMilliseconds: Int64(n), nonce: nonce(n))
            } catch {
                #expect(error.code == .capacityExceeded)
                refused += 1
            }
            #expect(validator.storedNonceCount <= 100)
        }
        #expect(refused == 4_900)
        // Once the flood's buckets age out, fresh messages are accepted again.
        clock.setWall(.milliseconds(40_000))
        #expect(validator.storedNonceCount == 0)
        try validator.validate(sessionID: "a", counter: counter + 1, timestampMilliseconds: 40_000, nonce: nonce(-1))
    }

    @Test func sessionsAreBoundedAndCanBeEnded() throws {
        let validator = try ChunkIntegrityValidator(
            configuration: Self.configuration, clock: ManualClock(wall: .milliseconds(0)))
        for s in 0..<4 {
            try validator.validate(sessionID: "s\(s)", counter: 1, timestampMilliseconds: 0, nonce: nonce(s))
        }
        #expect(
            code { () throws(IntegrityError) in
                try validator.validate(sessionID: "s4", counter: 1, timestampMilliseconds: 0, nonce: nonce(10))
            } == .capacityExceeded)
        validator.endSession("s0")
        try validator.validate(sessionID: "s4", counter: 1, timestampMilliseconds: 0, nonce: nonce(10))
    }

    @Test func badArgumentsAreRejected() throws {
        #expect(throws: IntegrityError.self) {
            try ChunkIntegrityValidator(
                configuration: .init(
                    skewWindowMilliseconds: 0, bucketWidthMilliseconds: 1, maximumNonces: 1, maximumSessions: 1),
                clock: ManualClock(wall: .zero))
        }
        let validator = try ChunkIntegrityValidator(
            configuration: Self.configuration, clock: ManualClock(wall: .milliseconds(0)))
        #expect(throws: IntegrityError.self) {
            try validator.validate(sessionID: "a", counter: 1, timestampMilliseconds: 0, nonce: [1, 2, 3])
        }
    }
}
