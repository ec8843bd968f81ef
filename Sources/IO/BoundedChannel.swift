import Dispatch
import Synchronization

/// A blocking single-producer, single-consumer queue between two threads with a fixed capacity:
/// `send` waits while it is full, `receive` waits while it is empty and returns nil once it is
/// closed and drained. Bounded on purpose: a slow consumer slows the producer instead of letting
/// chunks pile up in memory.
final class BoundedChannel<Element: Sendable>: Sendable {
    private let slots: DispatchSemaphore
    private let items = DispatchSemaphore(value: 0)
    private let state = Mutex<(queue: [Element], closed: Bool)>(([], false))

    /// A channel holding at most `capacity` elements.
    init(capacity: Int) {
        precondition(capacity > 0, "a channel holds at least one element")
        // Start at 0 and signal up: libdispatch traps when a semaphore is freed below its initial
        // value, which an abandoned channel (a stream dropped midway) would otherwise be.
        slots = DispatchSemaphore(value: 0)
        for _ in 0..<capacity { slots.signal() }
    }

    /// Appends `element`, waiting for room. Must not be called after `close()`.
    func send(_ element: Element) {
        slots.wait()
        state.withLock { $0.queue.append(element) }
        items.signal()
    }

    /// No more elements will be sent.
    func close() {
        state.withLock { $0.closed = true }
        items.signal()
    }

    /// The next element, waiting for one; nil when closed and empty.
    func receive() -> Element? {
        items.wait()
        let element: Element? = state.withLock { state in
            if state.queue.isEmpty { return nil }
            return state.queue.removeFirst()
        }
        if element != nil {
            slots.signal()
        } else {
            items.signal()  // keep "closed" visible to any later receive
        }
        return element
    }
}
