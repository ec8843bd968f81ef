import AetherIO
import Synchronization

/// The receive loop shared by `SessionClient` and `SessionHost`: waits for a datagram until the
/// owner's next timer deadline (at most 50 ms), hands it over, fires due timers, and stops on request.
final class UDPRunLoop: Sendable {
    private let socket: UDPSocket
    private let clock: any AetherClock
    private let stopped = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    init(socket: UDPSocket, clock: any AetherClock) {
        self.socket = socket
        self.clock = clock
    }

    /// Runs `body` (which calls `run`) on a new thread; `role` names the thread in the error.
    func start(role: String, _ body: @escaping @Sendable () -> Void) throws(TransportError) {
        do {
            running.store(true, ordering: .releasing)
            try Socket.spawnThread(body)
        } catch {
            running.store(false, ordering: .releasing)
            throw TransportError(.systemCall, "cannot start the \(role) thread: \(error.text)")
        }
    }

    /// Loops on the calling thread until `stop`: `deadline` is the owner's next timer (monotonic ms),
    /// `receive` gets each datagram with its source, `fireTimerIfDue` runs after every wait.
    func run(
        deadline: () -> UInt64?, receive: ([UInt8], UDPAddress) -> Void, fireTimerIfDue: () -> Void
    ) {
        running.store(true, ordering: .releasing)
        defer { running.store(false, ordering: .releasing) }
        while !stopped.load(ordering: .acquiring) {
            let now = SessionTime(reading: clock)
            let wait = deadline().map { $0 > now.monotonic ? min($0 - now.monotonic, 50) : 0 } ?? 50
            do {
                if let (bytes, source) = try socket.receive(timeoutMilliseconds: Int32(wait)) {
                    receive(bytes, source)
                }
            } catch {
                // A failing socket must not turn the loop into a busy spin.
                Socket.pause(milliseconds: 10)
            }
            fireTimerIfDue()
        }
    }

    /// Stops the loop and waits until it has ended (within one poll interval), so no thread is left
    /// using the crypto libraries when the process exits.
    func stop() {
        stopped.store(true, ordering: .releasing)
        while running.load(ordering: .acquiring) { Socket.pause(milliseconds: 1) }
    }
}
