import Testing

@testable import AetherUploader

/// A request waiting out a reset or refused connection wakes when another request of the upload gets through, not
/// only when its own back-off ends.
@Suite struct PathRecoveryTests {
    @Test func aSleeperWakesSoonAfterAnotherRequestGetsThrough() async throws {
        let recovery = PathRecovery()
        let started = ContinuousClock.now
        let mark = recovery.mark
        async let slept: Void = recovery.sleep(seconds: 120, since: mark)
        try await Task.sleep(for: .milliseconds(200))
        recovery.noteSuccess()
        try await slept
        let seconds = started.duration(to: .now) / .seconds(1)
        #expect(seconds >= 0.2)
        // Checked every 50 ms. The bound is far from both: a busy test run can hold this test's task for tens of
        // seconds (two cooperative threads), and a sleeper that did not wake would take the whole 120 s.
        #expect(seconds < 100, "\(seconds) s")
    }

    @Test func withoutASuccessTheSleepLastsItsWholeTime() async throws {
        let recovery = PathRecovery()
        let started = ContinuousClock.now
        try await recovery.sleep(seconds: 0.3, since: recovery.mark)
        #expect(started.duration(to: .now) >= .milliseconds(300))
    }

    @Test func aSuccessBeforeTheFailureDoesNotShortenTheSleep() async throws {
        let recovery = PathRecovery()
        recovery.noteSuccess()
        let started = ContinuousClock.now
        try await recovery.sleep(seconds: 0.3, since: recovery.mark)
        #expect(started.duration(to: .now) >= .milliseconds(300))
    }

    @Test func aSuccessAfterTheFailureButBeforeTheSleepEndsItAtOnce() async throws {
        let recovery = PathRecovery()
        let mark = recovery.mark
        recovery.noteSuccess()
        let started = ContinuousClock.now
        try await recovery.sleep(seconds: 30, since: mark)
        #expect(started.duration(to: .now) < .seconds(10))
    }

    @Test func aCancelledSleepThrows() async throws {
        let recovery = PathRecovery()
        let task = Task { try await recovery.sleep(seconds: 30, since: recovery.mark) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
