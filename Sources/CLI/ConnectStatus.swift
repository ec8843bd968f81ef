import AetherSecurity
import Synchronization

/// What `session connect` learns from the client's events (written on the client's thread).
final class ConnectStatus: Sendable {
    struct State {
        var live = false
        var sessions = 0
        var received = 0
        var countsReceived = false
        var failure: String?
        /// The key the main loop (or a reconnect the host asked for) is connecting under.
        var currentKey: KeyID?
    }
    private let state = Mutex(State())
    func update(_ body: (inout State) -> Void) { state.withLock { body(&$0) } }
    func read<R>(_ body: (State) -> R) -> R { state.withLock { body($0) } }
}
