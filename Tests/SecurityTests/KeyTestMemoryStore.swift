import AetherSecurity
import Synchronization

/// The in-memory key store the tests use: items by host, with switches to fail saves or mark an item damaged.
final class InMemoryKeyStore: KeyStore {
    private struct State {
        var items: [HostID: KeyStoreItem] = [:]
        var damaged: Set<HostID> = []
        var failSaves = false
        var failMarkers = false
        var retired = TombstoneList()
        var markerWrites = 0
        var saves = 0
        var deletes = 0
    }

    private let state = Mutex(State())

    init(items: [KeyStoreItem] = []) {
        state.withLock { state in
            for item in items { state.items[item.hostID] = item }
        }
    }

    /// Every save and delete throws `.systemCall` while set (a full disk).
    var failSaves: Bool {
        get { state.withLock { $0.failSaves } }
        set { state.withLock { $0.failSaves = newValue } }
    }

    /// Every write of a retired marker throws `.systemCall` while set.
    var failMarkers: Bool {
        get { state.withLock { $0.failMarkers } }
        set { state.withLock { $0.failMarkers = newValue } }
    }

    var retired: TombstoneList { state.withLock { $0.retired } }
    var markerWrites: Int { state.withLock { $0.markerWrites } }

    var saveCount: Int { state.withLock { $0.saves } }
    var deleteCount: Int { state.withLock { $0.deletes } }

    func item(_ hostID: HostID) -> KeyStoreItem? { state.withLock { $0.items[hostID] } }

    /// Marks a host's item damaged: loads report it, saves and deletes refuse it.
    func markDamaged(_ hostID: HostID) { state.withLock { _ = $0.damaged.insert(hostID) } }

    func load(hostID: HostID) throws(SecurityError) -> KeyStoreItem? {
        try state.withLock { (state) throws(SecurityError) -> KeyStoreItem? in
            if state.damaged.contains(hostID) { throw KeyStoreDamage.garbage.error(hostID: hostID) }
            return state.items[hostID]
        }
    }

    func save(_ item: KeyStoreItem) throws(SecurityError) {
        try state.withLock { (state) throws(SecurityError) in
            if state.damaged.contains(item.hostID) { throw KeyStoreDamage.garbage.error(hostID: item.hostID) }
            if state.failSaves { throw SecurityError(.systemCall, "no space left on device") }
            state.items[item.hostID] = item
            state.saves += 1
        }
    }

    func delete(hostID: HostID) throws(SecurityError) {
        try state.withLock { (state) throws(SecurityError) in
            if state.damaged.contains(hostID) { throw KeyStoreDamage.garbage.error(hostID: hostID) }
            if state.failSaves { throw SecurityError(.systemCall, "no space left on device") }
            state.items[hostID] = nil
            state.deletes += 1
        }
    }

    func retiredKeys() throws(SecurityError) -> TombstoneList { state.withLock { $0.retired } }

    func markRetired(_ id: KeyID, at instant: KeyTimestamp) throws(SecurityError) {
        try state.withLock { (state) throws(SecurityError) in
            if state.failMarkers { throw SecurityError(.systemCall, "no space left on device") }
            try state.retired.insert(id, retiredAt: instant.millisecondsSinceEpoch)
            state.markerWrites += 1
        }
    }

    func hostIDs() throws(SecurityError) -> [HostID] {
        state.withLock { Set($0.items.keys).union($0.damaged).sorted() }
    }
}
