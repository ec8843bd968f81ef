import Synchronization

/// The caller's word that the writer is done (the library's end signal for `FollowedUploader`): once finished,
/// the follower reads to the file's end as it is then, sends the rest and completes, without waiting for the
/// idle period or for the writer to close the file.
public final class FollowEnd: Sendable {
    private let finished = Mutex(false)

    /// A signal not yet given.
    public init() {}

    /// Says the writer is done.
    public func finish() { finished.withLock { $0 = true } }

    /// Whether `finish()` was called.
    public var isFinished: Bool { finished.withLock { $0 } }
}
