/// The device's paired keys as a pure state machine: every event returns the actions its owner must
/// take (save a host's item, reconnect now, suggest pairing again). No I/O, no clock of its own.
///
/// Rules (secure-session v3, "Key rule"):
/// - a key is deleted only on an authenticated tombstone, a refused pairing, or Forget;
/// - a deleted key is recorded in memory before its owner saves, and is never offered again, even
///   when the save fails or the store is read back with the key still in it;
/// - connect order is pending, then active, then unlisted, newest first within each;
/// - a key the host lists as pending gets an immediate reconnect; a pending key that meets three
///   silent connect cycles in a row makes the ring suggest pairing again;
/// - at most 16 keys; a pairing past that returns `.full` and evicts nothing (the user forgets a key).
public struct KeyRing: Sendable {
    /// The most keys the ring holds.
    public static let capacity = 16
    /// Silent connect cycles of a pending key after which the ring suggests pairing again.
    public static let silentCyclesBeforePairingAgain = 3

    /// What the ring's owner must do after an event.
    public enum Action: Sendable, Hashable {
        /// Write the host's item (`item(for:)`) to the key store; delete it when it holds no key.
        case save(HostID)
        /// Start a connect attempt under this key now, without waiting for the next cycle.
        case reconnectNow(KeyID)
        /// Tell the user to pair with this host again.
        case suggestPairingAgain(HostID)
    }

    /// The result of adding a freshly paired key.
    public enum PairingOutcome: Sendable, Hashable {
        /// The key was added; the actions say what to save.
        case paired([Action])
        /// The ring already holds `capacity` keys: nothing was added and nothing evicted.
        case full
        /// A key with this id is in the ring or was deleted from it; nothing changed.
        case duplicate
    }

    /// Where a key stands.
    public enum Status: Sendable, Hashable {
        /// In the ring, in this state.
        case live(PairedKey.State)
        /// Deleted by an authenticated tombstone.
        case tombstoned
        /// Deleted by a refused pairing or Forget.
        case deleted
    }

    private enum Removal: Sendable, Hashable { case tombstone, refusedPairing, forgotten }

    private var keys: [KeyID: PairedKey] = [:]
    /// Deleted keys, remembered so that neither a failed save nor a reload brings them back.
    private var removed: [KeyID: Removal] = [:]
    /// Consecutive silent connect cycles per pending key.
    private var silentCycles: [KeyID: Int] = [:]

    /// An empty ring.
    public init() {}

    /// A ring holding the keys of the given store items. Keys are never evicted, so a store that
    /// holds more than `capacity` keys is loaded whole and the ring refuses new pairings.
    public init(items: [KeyStoreItem]) {
        for item in items { merge(item) }
    }

    /// Adds the keys of a store item that the ring does not hold. Deleted keys stay deleted, even
    /// when the store still lists them because their save failed.
    public mutating func merge(_ item: KeyStoreItem) {
        for key in item.keys where removed[key.id] == nil && keys[key.id] == nil {
            keys[key.id] = key
        }
    }

    /// Keys a previous run saw retired by an authenticated tombstone (the store's retired markers): they
    /// are deleted from the ring and never offered, even when the store's item still holds them because
    /// that run's save failed. The next save of their host writes the deletion.
    public mutating func restoreRetired(_ ids: some Sequence<KeyID>) {
        for id in ids {
            keys[id] = nil
            removed[id] = .tombstone
            silentCycles[id] = nil
        }
    }

    /// Number of live keys.
    public var count: Int { keys.count }

    /// Hosts with at least one live key, in order.
    public var hostIDs: [HostID] { Set(keys.values.map(\.hostID)).sorted() }

    /// A live key by id; nil when unknown or deleted.
    public func key(_ id: KeyID) -> PairedKey? { keys[id] }

    /// Where a key stands; nil when the ring never held it.
    public func status(of id: KeyID) -> Status? {
        if let key = keys[id] { return .live(key.state) }
        switch removed[id] {
        case .tombstone: return .tombstoned
        case .refusedPairing, .forgotten: return .deleted
        case nil: return nil
        }
    }

    /// The host's item as the store should hold it: its live keys, newest first.
    public func item(for hostID: HostID) -> KeyStoreItem {
        let hostKeys = keys.values.filter { $0.hostID == hostID }.sorted(by: Self.newestFirst)
        return KeyStoreItem(validatedHostID: hostID, keys: hostKeys)
    }

    /// The keys to try when connecting to `hostID`: pending, then active, then unlisted, newest first.
    public func connectOrder(for hostID: HostID) -> [PairedKey] {
        keys.values.filter { $0.hostID == hostID }.sorted { lhs, rhs in
            let (left, right) = (Self.rank(lhs.state), Self.rank(rhs.state))
            if left != right { return left < right }
            return Self.newestFirst(lhs, rhs)
        }
    }

    /// Adds a freshly paired key (see `PairedKey.generate`).
    public mutating func pair(_ key: PairedKey) -> PairingOutcome {
        guard keys[key.id] == nil, removed[key.id] == nil else { return .duplicate }
        guard keys.count < Self.capacity else { return .full }
        keys[key.id] = key
        return .paired([.save(key.hostID)])
    }

    /// A tombstone for `id` arrived. Only an authenticated one (inside a message the key itself
    /// authenticated) deletes the key; anyone on the path can forge an unauthenticated one.
    public mutating func receivedTombstone(for id: KeyID, authenticated: Bool) -> [Action] {
        guard authenticated else { return [] }
        return remove(id, as: .tombstone)
    }

    /// The host refused to pair `id`. Deletes the key only while it is still pending: an active
    /// key is not retired by a pairing answer.
    public mutating func pairingRefused(_ id: KeyID) -> [Action] {
        guard keys[id]?.state == .pending else { return [] }
        return remove(id, as: .refusedPairing)
    }

    /// The user forgets one key.
    public mutating func forget(_ id: KeyID) -> [Action] { remove(id, as: .forgotten) }

    /// The user forgets every key of a host.
    public mutating func forget(host hostID: HostID) -> [Action] {
        let ids = keys.values.filter { $0.hostID == hostID }.map(\.id)
        for id in ids {
            keys[id] = nil
            removed[id] = .forgotten
            silentCycles[id] = nil
        }
        return ids.isEmpty ? [] : [.save(hostID)]
    }

    /// The host's authenticated slot status: which of its keys it holds as pending and as active.
    /// Keys it leaves out become unlisted (never deleted). Listed-pending keys get an immediate reconnect.
    public mutating func hostListed(_ hostID: HostID, pending: Set<KeyID>, active: Set<KeyID>) -> [Action] {
        var changed = false
        var reconnects: [Action] = []
        for id in keys.keys.sorted() where keys[id]?.hostID == hostID {
            let state: PairedKey.State =
                active.contains(id) ? .active : pending.contains(id) ? .pending : .unlisted
            if state == .pending { reconnects.append(.reconnectNow(id)) }
            if state == .active { silentCycles[id] = nil }
            if keys[id]?.state != state {
                keys[id]?.state = state
                changed = true
            }
        }
        return (changed ? [.save(hostID)] : []) + reconnects
    }

    /// A connect cycle under `id` ended: `answered` when any authenticated answer came back.
    /// A pending key's third silent cycle in a row suggests pairing again (once per run of silence).
    public mutating func connectCycleEnded(_ id: KeyID, answered: Bool) -> [Action] {
        guard let key = keys[id] else { return [] }
        guard !answered else {
            silentCycles[id] = nil
            return []
        }
        guard key.state == .pending else { return [] }
        let count = (silentCycles[id] ?? 0) + 1
        silentCycles[id] = count
        return count == Self.silentCyclesBeforePairingAgain ? [.suggestPairingAgain(key.hostID)] : []
    }

    private mutating func remove(_ id: KeyID, as removal: Removal) -> [Action] {
        guard let key = keys[id] else { return [] }
        // Recorded before the owner saves: from here on the key is never offered, whatever the store does.
        keys[id] = nil
        removed[id] = removal
        silentCycles[id] = nil
        return [.save(key.hostID)]
    }

    private static func rank(_ state: PairedKey.State) -> Int {
        switch state {
        case .pending: 0
        case .active: 1
        case .unlisted: 2
        }
    }

    private static func newestFirst(_ lhs: PairedKey, _ rhs: PairedKey) -> Bool {
        if lhs.createdAt != rhs.createdAt { return lhs.createdAt > rhs.createdAt }
        return lhs.id > rhs.id
    }
}
