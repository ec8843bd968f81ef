import AetherIO
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The owner of the HTTP server's `ConnectionGuardStateMachine`: it holds the machine under a lock for the
/// daemon's callbacks, and a sweep every tick on a queue of its own (not Swift's cooperative pool, which blocked
/// tests can hold) shuts down the sockets of connections whose header deadline passed. `shutdown(2)` wakes the connection's
/// thread, which sees the peer gone and closes the connection; no request was presented, so nothing else runs.
final class ConnectionGuard: Sendable {
    private let state: Mutex<ConnectionGuardStateMachine>
    private let clock: any AetherClock
    private let queue = DispatchQueue(label: "aether.receiver.connection-guard")
    private let stopped = Atomic<Bool>(false)
    private let tickMilliseconds: Int

    /// A guard with `perClientLimit` connections per address (0: none), `headerTimeoutSeconds` for a connection's
    /// first header block (0: no deadlines) and `keepAliveSeconds` for each later one, reading time from `clock`.
    init(perClientLimit: Int, headerTimeoutSeconds: Double, keepAliveSeconds: Double, clock: any AetherClock) {
        let timeout = max(0, headerTimeoutSeconds)
        state = Mutex(
            ConnectionGuardStateMachine(
                perClientLimit: perClientLimit, headerTimeoutNanoseconds: Int64((timeout * 1e9).rounded()),
                keepAliveTimeoutNanoseconds: Int64((max(0, keepAliveSeconds) * 1e9).rounded())))
        self.clock = clock
        // A deadline is enforced within an eighth of itself (at most 250 ms late, at least a 20 ms tick).
        tickMilliseconds = min(250, max(20, Int(timeout * 1000 / 8)))
    }

    /// Starts the sweeps (when there is a deadline to enforce).
    func start() {
        guard state.withLock({ $0.headerTimeout }) > 0 else { return }
        schedule()
    }

    /// Stops the sweeps; connections still open are the daemon's to close.
    func stop() { stopped.store(true, ordering: .relaxed) }

    private func schedule() {
        queue.asyncAfter(deadline: .now() + .milliseconds(tickMilliseconds)) { [weak self] in
            guard let self, !self.stopped.load(ordering: .relaxed) else { return }
            self.sweep()
            self.schedule()
        }
    }

    /// Shuts down the sockets of connections past their header deadline, under the lock `closed` takes: the
    /// daemon closes a socket only after `closed` returned, so the number shut is still this connection's.
    func sweep() {
        let now = clock.monotonicNanoseconds()
        state.withLock { machine in
            for socket in machine.expired(now: now) { _ = shutdown(socket, Int32(SHUT_RDWR)) }
        }
    }

    /// Whether a socket accepted from `key` may become a connection.
    func admit(_ key: ClientAddressKey) -> Bool { state.withLock { $0.admit(key) } }

    /// Connection `id` started on `socket`.
    func opened(_ id: UInt, key: ClientAddressKey, socket: Int32) {
        let now = clock.monotonicNanoseconds()
        state.withLock { $0.opened(id, key: key, socket: socket, now: now) }
    }

    /// Connection `id`'s header block is complete.
    func headerReceived(_ id: UInt) { state.withLock { $0.headerReceived(id) } }

    /// Connection `id`'s request ended (`timedOut`: by the idle timeout).
    func requestEnded(_ id: UInt, timedOut: Bool) {
        let now = clock.monotonicNanoseconds()
        state.withLock { $0.requestEnded(id, now: now, timedOut: timedOut) }
    }

    /// Connection `id` closed.
    func closed(_ id: UInt) { state.withLock { $0.closed(id) } }

    /// The counters and the connections open now.
    var snapshot: (counters: ConnectionGuardStateMachine.Counters, open: Int) {
        state.withLock { ($0.counters, $0.openCount) }
    }
}
