import Synchronization

/// The one owner of derived resume keys (RACE-4): look-up and derive-then-insert happen under one lock in one
/// synchronous call, so two callers asking for the same session at once get the same key and the map is never
/// read while it is being written. Keys are released (and wiped) when removed.
public final class SessionKeyCache: Sendable {
    private struct State {
        var keys: [String: SymmetricKey] = [:]
    }

    private let master: SymmetricKey
    private let capacity: Int
    private let state = Mutex(State())

    /// A cache of keys derived from `master`, holding at most `capacity` sessions.
    public init(master: SymmetricKey, capacity: Int = 1024) {
        precondition(capacity > 0, "a key cache holds at least one key")
        self.master = master
        self.capacity = capacity
    }

    /// The session key for `sessionID`: the cached one, or a fresh derivation that is cached before the lock
    /// is let go. Throws `.limitExceeded` when the cache is full and `.invalidKey` for a bad session id.
    public func key(for sessionID: String) throws(SecurityError) -> SymmetricKey {
        try state.withLock { (state) throws(SecurityError) -> SymmetricKey in
            if let cached = state.keys[sessionID] { return cached }
            guard state.keys.count < capacity else {
                throw SecurityError(.limitExceeded, "the session key cache holds \(capacity) keys")
            }
            let derived = try ResumeKeyDerivation.sessionKey(master: master, sessionID: sessionID)
            state.keys[sessionID] = derived
            return derived
        }
    }

    /// Forgets the key of `sessionID` (a finished or abandoned upload).
    public func remove(sessionID: String) {
        state.withLock { _ = $0.keys.removeValue(forKey: sessionID) }
    }

    /// Forgets every key.
    public func removeAll() {
        state.withLock { $0.keys.removeAll() }
    }

    /// How many session keys are cached.
    public var count: Int { state.withLock { $0.keys.count } }
}
