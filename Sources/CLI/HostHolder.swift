import AetherTransport
import Synchronization

/// Lets the host's event callback reach the host it belongs to (set once after creation).
final class HostHolder: Sendable {
    private let value = Mutex<SessionHost?>(nil)
    var host: SessionHost? { value.withLock { $0 } }
    func set(_ host: SessionHost) { value.withLock { $0 = host } }
}
