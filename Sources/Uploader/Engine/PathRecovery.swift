import Synchronization

/// When requests of one upload get through. A request waiting out a reset or refused connection sleeps its back-off
/// only until another request of the same upload gets through: the path is then back for every stream, and each
/// stream's own back-off (up to `UploadConfiguration.connectionBackoffLimit`) would otherwise leave it idle for up
/// to that long after the link returned (on the link lab's resets, 0.4-1.1 s per stream and reset).
final class PathRecovery: Sendable {
    private let successes = Atomic<Int>(0)

    /// Notes that a request got through.
    func noteSuccess() { successes.add(1, ordering: .relaxed) }

    /// The successes so far: what `sleep(seconds:since:)` compares against, taken when a request failed.
    var mark: Int { successes.load(ordering: .relaxed) }

    /// Sleeps `seconds`, or until a request has got through since `mark`, whichever comes first (looked at every
    /// `slice` seconds). Throws `CancellationError` when the task is cancelled.
    func sleep(seconds: Double, since mark: Int, slice: Double = 0.05) async throws {
        guard seconds > 0 else { return }
        let deadline = ContinuousClock.now + .milliseconds(Int64((seconds * 1000).rounded(.up)))
        while successes.load(ordering: .relaxed) == mark, ContinuousClock.now < deadline {
            let left = ContinuousClock.now.duration(to: deadline)
            try await Task.sleep(for: min(left, .milliseconds(Int64(max(1, slice * 1000)))))
        }
    }
}
