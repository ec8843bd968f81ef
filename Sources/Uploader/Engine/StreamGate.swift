import Synchronization

/// How many requests of one upload are on the wire at once. Every attempt, a retry included, takes a slot before it
/// is sent and gives it back when it ends, so the link planner's stream count holds at once, also for parts that
/// are retrying (a task does not return to the dispatch loop between its attempts). The bytes of the requests
/// holding slots are the upload's bytes in flight.
final class StreamGate: Sendable {
    private struct Waiter {
        let id: UInt64
        let bytes: Int64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var limit: Int
        var active = 0
        var bytes: Int64 = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0

        /// Takes the waiters that fit now, in order.
        mutating func admitted() -> [CheckedContinuation<Void, any Error>] {
            var ready: [CheckedContinuation<Void, any Error>] = []
            while active < max(1, limit), !waiters.isEmpty {
                let waiter = waiters.removeFirst()
                active += 1
                bytes += waiter.bytes
                ready.append(waiter.continuation)
            }
            return ready
        }
    }

    private let state: Mutex<State>

    init(limit: Int) { state = Mutex(State(limit: max(1, limit))) }

    /// Requests on the wire now, and their bytes.
    var inFlight: (requests: Int, bytes: Int64) { state.withLock { ($0.active, $0.bytes) } }

    /// Sets how many requests may be on the wire (at least one); waiting ones go when there is room.
    func setLimit(_ limit: Int) {
        let ready = state.withLock { state in
            state.limit = max(1, limit)
            return state.admitted()
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits for a slot for a request of `bytes` (cancellation ends the wait with `CancellationError`).
    func acquire(bytes: Int64) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancelled before the waiter is listed: the cancellation handler found nothing to end.
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let ready: [CheckedContinuation<Void, any Error>] = state.withLock { state in
                    state.waiters.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return state.admitted()
                }
                for continuation in ready { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let position = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: position).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// Gives back a slot taken for `bytes`.
    func release(bytes: Int64) {
        let ready = state.withLock { state in
            state.active = max(0, state.active - 1)
            state.bytes = max(0, state.bytes - bytes)
            return state.admitted()
        }
        for continuation in ready { continuation.resume() }
    }
}
