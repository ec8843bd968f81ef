import Testing

@testable import AetherUploader

@Suite struct StreamGateTests {
    @Test func noMoreThanTheLimitHoldSlotsAndRaisingItLetsWaitersIn() async throws {
        let gate = StreamGate(limit: 2)
        try await gate.acquire(bytes: 10)
        try await gate.acquire(bytes: 20)
        #expect(gate.inFlight == (requests: 2, bytes: 30))
        let third = Task { try await gate.acquire(bytes: 5) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(gate.inFlight.requests == 2)
        gate.setLimit(3)
        try await third.value
        #expect(gate.inFlight == (requests: 3, bytes: 35))
        gate.release(bytes: 10)
        gate.release(bytes: 20)
        gate.release(bytes: 5)
        #expect(gate.inFlight == (requests: 0, bytes: 0))
    }

    @Test func aLowerLimitHoldsNewAttemptsUntilEnoughSlotsAreGivenBack() async throws {
        let gate = StreamGate(limit: 3)
        for _ in 0..<3 { try await gate.acquire(bytes: 1) }
        gate.setLimit(1)
        let waiting = Task { try await gate.acquire(bytes: 1) }
        gate.release(bytes: 1)
        try await Task.sleep(for: .milliseconds(50))
        #expect(gate.inFlight.requests == 2)
        gate.release(bytes: 1)
        try await Task.sleep(for: .milliseconds(50))
        #expect(gate.inFlight.requests == 1)
        gate.release(bytes: 1)
        try await waiting.value
        #expect(gate.inFlight.requests == 1)
    }

    @Test func cancellingAWaiterEndsItsWaitWithoutASlot() async throws {
        let gate = StreamGate(limit: 1)
        try await gate.acquire(bytes: 1)
        let waiting = Task { try await gate.acquire(bytes: 1) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(gate.inFlight.requests == 1)
    }
}
