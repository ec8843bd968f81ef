public import AetherCoding
import Synchronization

/// Several uploads at once in one queue with six priority levels (`DataPriority`, critical first) and
/// backpressure: at most `maximumRunning` run, at most `maximumWaiting` wait, and a submission beyond that is
/// refused with `.queueFull` at once rather than piling up. A waiting upload whose task is cancelled leaves the
/// queue with `.cancelled`. The state is a `UploadQueueStateMachine` behind a lock; continuations are resumed
/// after the lock is let go.
public final class UploadQueue: Sendable {
    private struct State: ~Copyable {
        var machine: UploadQueueStateMachine<CheckedContinuation<Void, any Error>>
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    /// A queue running at most `maximumRunning` uploads with at most `maximumWaiting` waiting.
    public init(maximumRunning: Int, maximumWaiting: Int) {
        state = Mutex(
            State(machine: UploadQueueStateMachine(maximumRunning: maximumRunning, maximumWaiting: maximumWaiting)))
    }

    /// Uploads running and waiting now.
    public var counts: (running: Int, waiting: Int) {
        state.withLock { ($0.machine.running, $0.machine.waitingCount) }
    }

    /// Runs `job` once its turn comes; throws `.queueFull` when the queue is full and `.cancelled` when the task is
    /// cancelled while it waits.
    public func run<T: Sendable>(priority: DataPriority, _ job: @Sendable () async throws -> T) async throws -> T {
        try await enter(priority: priority)
        defer { leave() }
        return try await job()
    }

    /// Waits for a turn as `run` does, for a caller that starts the work itself (a capture admits its files in
    /// its own order, then runs each in a task); each successful `enter` is followed by exactly one `leave`.
    public func enter(priority: DataPriority) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let admission: UploadQueueStateMachine<CheckedContinuation<Void, any Error>>.Admission =
                    state.withLock { state in
                        if Task.isCancelled { return .refuse }
                        return state.machine.enqueue(id: id, priority: priority, waiter: continuation)
                    }
                switch admission {
                case .run: continuation.resume()
                case .wait: break
                case .refuse:
                    if Task.isCancelled {
                        continuation.resume(
                            throwing: UploaderError(.cancelled, "the upload was cancelled while queued"))
                    } else {
                        continuation.resume(
                            throwing: UploaderError(
                                .queueFull, "the upload queue is full; submit again once an upload finishes"))
                    }
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.machine.cancel(id: id) }
            waiter?.resume(throwing: UploaderError(.cancelled, "the upload was cancelled while queued"))
        }
    }

    /// Gives back a turn taken with `enter`: the next waiter, the highest priority first, runs.
    public func leave() {
        let next = state.withLock { $0.machine.finish() }
        next?.resume()
    }
}
