import AetherTransport
import Synchronization

/// Attempts whose request never reached the destination: the connection was refused (a receiver restarting, a
/// link that rejects new connections while it is down) or the host was not found. The bytes an upload reports as
/// sent leave them out; every other failed attempt may have sent its body, in part or whole, and counts whole.
final class UnsentAttempts: Sendable {
    private let count = Mutex(0)

    /// How many attempts sent nothing.
    var value: Int { count.withLock { $0 } }

    /// `operation`, counted when it fails before anything was sent.
    func counting<T>(_ operation: () async throws(TransportError) -> T) async throws(TransportError) -> T {
        do {
            return try await operation()
        } catch {
            if Self.sentNothing(error.code) { count.withLock { $0 += 1 } }
            throw error
        }
    }

    /// Whether a failure with `code` happened before the request's body left.
    static func sentNothing(_ code: TransportError.Code) -> Bool {
        code == .connectionRefused || code == .hostNotFound
    }
}
