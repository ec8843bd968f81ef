import Testing

@testable import AetherUploader

/// A request waiting out a reset or refused connection wakes when another request of the upload gets through, not
/// only when its own back-off ends.
@Suite struct PathRecoveryTests {
    @Test func aSleeperWakesSoonAfterAnotherRequestGetsThrough() async throws {
        // The sleep is an hour; the success ends it. Nothing here is timed closely: a busy test run can hold this
        // test's tasks for minutes on two cooperative threads, so the only bound is a guard far from both.
        let recovery = PathRecovery()
        let mark = recovery.mark
        let woke = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await recovery.sleep(seconds: 3600, since: mark)
                return true
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(200))
                recovery.noteSuccess()
                try await Task.sleep(for: .seconds(900))
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(woke, "the sleeper did not wake within 900 s of the success")
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
        try await recovery.sleep(seconds: 3600, since: mark)
        #expect(started.duration(to: .now) < .seconds(900))
    }

    @Test func aCancelledSleepThrows() async throws {
        let recovery = PathRecovery()
        let task = Task { try await recovery.sleep(seconds: 30, since: recovery.mark) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
