public import AetherIO
import Synchronization

/// Owns the device's key ring: holds the `KeyRing` state machine in a lock, performs its save
/// actions on a `KeyStore`, and stamps new keys with an injected clock.
///
/// The ring changes first and the store is written after: a key deleted by a tombstone is never
/// offered again even when the save throws (the error is returned to the caller, the deletion stands,
/// and the next save of that host writes it). Saves run one at a time and each writes the host's
/// latest item, so a slow save never lands after a newer one.
public final class KeyManager: Sendable {
    /// The result of a pairing.
    public enum PairingResult: Sendable {
        /// The new key, saved.
        case paired(PairedKey)
        /// The ring is full: nothing was added or evicted; the user must forget a key first.
        case full
    }

    private let ring: Mutex<KeyRing>
    private let saving = Mutex<Void>(())
    private let store: any KeyStore
    private let clock: any AetherClock
    /// Hosts whose items could not be read (damaged); their keys are not in the ring.
    public let unreadableHosts: [HostID: SecurityError]

    /// Loads every item of `store`. Damaged items are skipped and listed in `unreadableHosts`, never rewritten:
    /// saves for those hosts keep failing until the user repairs or removes the item.
    public init(store: any KeyStore, clock: any AetherClock) throws(SecurityError) {
        var items: [KeyStoreItem] = []
        var unreadable: [HostID: SecurityError] = [:]
        for hostID in try store.hostIDs() {
            do {
                if let item = try store.load(hostID: hostID) { items.append(item) }
            } catch  where error.code == .keyStoreDamaged {
                unreadable[hostID] = error
            }
        }
        self.store = store
        self.clock = clock
        self.unreadableHosts = unreadable
        self.ring = Mutex(KeyRing(items: items))
    }

    /// A copy of the ring's state.
    public var snapshot: KeyRing { ring.withLock { $0 } }

    /// The keys to try for `hostID`, in connect order.
    public func connectOrder(for hostID: HostID) -> [PairedKey] { ring.withLock { $0.connectOrder(for: hostID) } }

    /// Creates, adds and saves a fresh key for `hostID`. If the save fails the key stays in the ring
    /// (it is a live pairing) and the error is thrown.
    public func pair(hostID: HostID) throws(SecurityError) -> PairingResult {
        let key = PairedKey.generate(hostID: hostID, now: clock.keyTimestamp())
        let outcome = ring.withLock { $0.pair(key) }
        switch outcome {
        case .full: return .full
        case .duplicate: throw SecurityError(.invalidKey, "a fresh key id collided with a known one")
        case .paired(let actions):
            _ = try perform(actions)
            return .paired(key)
        }
    }

    /// A tombstone for `id` arrived; see `KeyRing.receivedTombstone(for:authenticated:)`.
    public func receivedTombstone(for id: KeyID, authenticated: Bool) throws(SecurityError) {
        _ = try perform(ring.withLock { $0.receivedTombstone(for: id, authenticated: authenticated) })
    }

    /// The host refused to pair `id`.
    public func pairingRefused(_ id: KeyID) throws(SecurityError) {
        _ = try perform(ring.withLock { $0.pairingRefused(id) })
    }

    /// The user forgets a key.
    public func forget(_ id: KeyID) throws(SecurityError) {
        _ = try perform(ring.withLock { $0.forget(id) })
    }

    /// The host's authenticated slot status. Returns the actions for the caller (reconnects).
    public func hostListed(_ hostID: HostID, pending: Set<KeyID>, active: Set<KeyID>) throws(SecurityError)
        -> [KeyRing.Action]
    {
        try perform(ring.withLock { $0.hostListed(hostID, pending: pending, active: active) })
    }

    /// A connect cycle ended. Returns the actions for the caller (a suggestion to pair again).
    public func connectCycleEnded(_ id: KeyID, answered: Bool) -> [KeyRing.Action] {
        ring.withLock { $0.connectCycleEnded(id, answered: answered) }
    }

    /// Reads the store again and adds keys the ring does not hold; deleted keys stay deleted.
    public func reload() throws(SecurityError) {
        for hostID in try store.hostIDs() {
            guard let item = try store.load(hostID: hostID) else { continue }
            ring.withLock { $0.merge(item) }
        }
    }

    /// Saves every host named by a `.save` action and returns the other actions. Every save is tried;
    /// the first failure is thrown after the rest ran.
    private func perform(_ actions: [KeyRing.Action]) throws(SecurityError) -> [KeyRing.Action] {
        var rest: [KeyRing.Action] = []
        var firstFailure: SecurityError?
        for action in actions {
            guard case .save(let hostID) = action else {
                rest.append(action)
                continue
            }
            do {
                try save(hostID)
            } catch {
                if firstFailure == nil { firstFailure = error }
            }
        }
        if let firstFailure { throw firstFailure }
        return rest
    }

    /// Writes the host's current item, under a lock that orders saves, so the newest state lands last.
    private func save(_ hostID: HostID) throws(SecurityError) {
        try saving.withLock { (_) throws(SecurityError) in
            let item = ring.withLock { $0.item(for: hostID) }
            if item.keys.isEmpty {
                try store.delete(hostID: hostID)
            } else {
                try store.save(item)
            }
        }
    }
}
