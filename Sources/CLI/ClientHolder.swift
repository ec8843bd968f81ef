import AetherTransport
import Synchronization

/// Lets the client's event callback reach the client it belongs to (set once after creation).
final class ClientHolder: Sendable {
    private let value = Mutex<SessionClient?>(nil)
    var client: SessionClient? { value.withLock { $0 } }
    func set(_ client: SessionClient) { value.withLock { $0 = client } }
}
