public import AetherCoding

/// The upload queue's state: how many uploads run, and who waits at which of the six priorities. Pure: every
/// method returns what the owner must do (start, wait, refuse, wake a waiter), so it is tested without tasks.
public struct UploadQueueStateMachine<Waiter>: ~Copyable {
    /// What `enqueue` decided.
    public enum Admission {
        /// Run now (a slot was free and nobody waits ahead).
        case run
        /// Wait; the owner keeps the waiter until `finish` hands it back.
        case wait
        /// The queue is full (backpressure): refuse.
        case refuse
    }

    /// Uploads allowed to run at once.
    public let maximumRunning: Int
    /// Uploads allowed to wait at once; more are refused.
    public let maximumWaiting: Int
    /// Uploads running.
    public private(set) var running = 0
    private var waiting: [[(id: UInt64, waiter: Waiter)]] = Array(repeating: [], count: DataPriority.allCases.count)

    /// An empty queue.
    public init(maximumRunning: Int, maximumWaiting: Int) {
        self.maximumRunning = max(1, maximumRunning)
        self.maximumWaiting = max(0, maximumWaiting)
    }

    /// Uploads waiting.
    public var waitingCount: Int { waiting.reduce(0) { $0 + $1.count } }

    /// Admits an upload of `priority`: run, wait (the waiter is kept) or refuse.
    public mutating func enqueue(id: UInt64, priority: DataPriority, waiter: Waiter) -> Admission {
        if running < maximumRunning && waitingCount == 0 {
            running += 1
            return .run
        }
        guard waitingCount < maximumWaiting else { return .refuse }
        waiting[priority.rawValue].append((id, waiter))
        return .wait
    }

    /// A running upload finished: returns the waiter to start next (highest priority first, then first come), or
    /// nil when nobody waits (the slot is freed).
    public mutating func finish() -> Waiter? {
        for level in waiting.indices where !waiting[level].isEmpty {
            return waiting[level].removeFirst().waiter
        }
        running = max(0, running - 1)
        return nil
    }

    /// Removes a waiter that gave up (cancelled); nil when it already left the queue.
    public mutating func cancel(id: UInt64) -> Waiter? {
        for level in waiting.indices {
            if let position = waiting[level].firstIndex(where: { $0.id == id }) {
                return waiting[level].remove(at: position).waiter
            }
        }
        return nil
    }
}
