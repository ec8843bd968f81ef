public import AetherIO
import Synchronization

/// Owns the device's key ring: holds the `KeyRing` state machine in a lock, performs its save
/// actions on a `KeyStore`, and stamps new keys with an injected clock.
///
/// The ring changes first and the store is written after: a key deleted by a tombstone is never
/// offered again even when the save throws (the error is returned to the caller, the deletion stands,
/// and the next save of that host writes it). A tombstone is also written to the store's retired markers
/// before the item is saved, and the markers are applied at start, so the key stays retired after a
/// restart even when the item's save failed. Saves run one at a time and each writes the host's
/// latest item, so a slow save never lands after a newer one.
public final class KeyManager: Sendable {
    /// What became of an authenticated tombstone.
    public struct Retirement: Sendable {
        /// The retired key.
        public let keyID: KeyID
        /// Whether the tombstone retired a key of the ring (it was authenticated and the ring held the key,
        /// live or already retired earlier in this run).
        public let retired: Bool
        /// Why the retired marker could not be written; nil when it was (or nothing needed writing).
        public let markerFailure: SecurityError?
        /// Why the host's item could not be saved without the key; nil when it was.
        public let itemFailure: SecurityError?

        /// The retirement is on disk (marker or item) and holds after a restart.
        public var holdsAfterRestart: Bool { !retired || markerFailure == nil || itemFailure == nil }
    }

    /// What became of a host's slot status.
    public struct Listing: Sendable {
        /// What the caller must do (reconnect under a key the host lists as pending).
        public let actions: [KeyRing.Action]
        /// Why the new key states could not be saved; nil when they were (or nothing changed).
        public let saveFailure: SecurityError?
    }

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

    /// Loads every item of `store` and applies its retired markers. Damaged items are skipped and listed in
    /// `unreadableHosts`, never rewritten: saves for those hosts keep failing until the user repairs or removes
    /// the item. Damaged retired markers throw `.keyStoreDamaged` (fail closed: no key is offered when it
    /// cannot be proven not retired).
    public init(store: any KeyStore, clock: any AetherClock) throws(SecurityError) {
        let retired = try store.retiredKeys()
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
        var ring = KeyRing(items: items)
        ring.restoreRetired(retired.keyIDs)
        self.ring = Mutex(ring)
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

    /// A tombstone for `id` arrived; see `KeyRing.receivedTombstone(for:authenticated:)`. An authenticated one
    /// deletes the key in memory, then writes the retired marker, then saves the host's item; both writes are
    /// tried and their failures reported. A key retired earlier in this run gets its marker written again (a
    /// marker that failed before is retried), so its retirement is on disk as soon as any write succeeds.
    public func receivedTombstone(for id: KeyID, authenticated: Bool) -> Retirement {
        let (actions, known) = ring.withLock { ring in
            let wasKnown = ring.status(of: id) != nil
            return (ring.receivedTombstone(for: id, authenticated: authenticated), wasKnown)
        }
        guard authenticated, known, ring.withLock({ $0.status(of: id) }) == .tombstoned else {
            return Retirement(keyID: id, retired: false, markerFailure: nil, itemFailure: nil)
        }
        var markerFailure: SecurityError?
        do {
            try store.markRetired(id, at: clock.keyTimestamp())
        } catch {
            markerFailure = error
        }
        var itemFailure: SecurityError?
        do {
            _ = try perform(actions)
        } catch {
            itemFailure = error
        }
        return Retirement(keyID: id, retired: true, markerFailure: markerFailure, itemFailure: itemFailure)
    }

    /// The host refused to pair `id`.
    public func pairingRefused(_ id: KeyID) throws(SecurityError) {
        _ = try perform(ring.withLock { $0.pairingRefused(id) })
    }

    /// The user forgets a key.
    public func forget(_ id: KeyID) throws(SecurityError) {
        _ = try perform(ring.withLock { $0.forget(id) })
    }

    /// The host's authenticated slot status. Returns the actions for the caller (reconnects), also when the
    /// save of the new key states failed (the failure is returned beside them).
    public func hostListed(_ hostID: HostID, pending: Set<KeyID>, active: Set<KeyID>) -> Listing {
        let actions = ring.withLock { $0.hostListed(hostID, pending: pending, active: active) }
        var failure: SecurityError?
        do {
            try saveAll(actions)
        } catch {
            failure = error
        }
        return Listing(actions: actions.filter { if case .save = $0 { false } else { true } }, saveFailure: failure)
    }

    /// A connect cycle ended. Returns the actions for the caller (a suggestion to pair again).
    public func connectCycleEnded(_ id: KeyID, answered: Bool) -> [KeyRing.Action] {
        ring.withLock { $0.connectCycleEnded(id, answered: answered) }
    }

    /// Reads the store again and adds keys the ring does not hold; deleted keys stay deleted, and keys the
    /// retired markers name are deleted.
    public func reload() throws(SecurityError) {
        let retired = try store.retiredKeys()
        ring.withLock { $0.restoreRetired(retired.keyIDs) }
        for hostID in try store.hostIDs() {
            guard let item = try store.load(hostID: hostID) else { continue }
            ring.withLock { $0.merge(item) }
        }
    }

    /// Saves every host named by a `.save` action and returns the other actions. Every save is tried;
    /// the first failure is thrown after the rest ran.
    private func perform(_ actions: [KeyRing.Action]) throws(SecurityError) -> [KeyRing.Action] {
        try saveAll(actions)
        return actions.filter { if case .save = $0 { false } else { true } }
    }

    /// Runs every `.save` action; the first failure is thrown after the rest ran.
    private func saveAll(_ actions: [KeyRing.Action]) throws(SecurityError) {
        var firstFailure: SecurityError?
        for case .save(let hostID) in actions {
            do {
                try save(hostID)
            } catch {
                if firstFailure == nil { firstFailure = error }
            }
        }
        if let firstFailure { throw firstFailure }
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
