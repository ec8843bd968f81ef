import AetherIO
import Testing

@testable import AetherSecurity

@Suite struct KeyManagerTests {
    let host = HostID()

    @Test func pairingStampsTheInjectedClockAndSavesTheHostItem() throws {
        let store = InMemoryKeyStore()
        let clock = ManualClock(wall: .milliseconds(5_000))
        let manager = try KeyManager(store: store, clock: clock)
        guard case .paired(let first) = try manager.pair(hostID: host) else {
            Issue.record("pairing an empty ring must succeed")
            return
        }
        clock.advance(by: .milliseconds(250))
        guard case .paired(let second) = try manager.pair(hostID: host) else {
            Issue.record("pairing a ring with one key must succeed")
            return
        }
        #expect(first.createdAt == KeyTimestamp(millisecondsSinceEpoch: 5_000))
        #expect(second.createdAt == KeyTimestamp(millisecondsSinceEpoch: 5_250))
        #expect(first.state == .pending && first.key.bitCount == 256)
        #expect(store.item(host)?.keys.map(\.id) == [second.id, first.id])
        #expect(manager.connectOrder(for: host).map(\.id) == [second.id, first.id])
    }

    @Test func aTombstonedKeyIsNeverUsedAgainWhenSavingFails() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [key])])
        let manager = try KeyManager(store: store, clock: ManualClock())
        store.failSaves = true
        #expect(throws: SecurityError.self) { try manager.receivedTombstone(for: key.id, authenticated: true) }
        // The store still holds the key, yet the ring never offers it, not even after reading the store again.
        #expect(store.item(host)?.keys.map(\.id) == [key.id])
        #expect(manager.connectOrder(for: host).isEmpty)
        try manager.reload()
        #expect(manager.connectOrder(for: host).isEmpty)
        #expect(manager.snapshot.status(of: key.id) == .tombstoned)
        // Once the disk recovers, the next save of the host writes the deletion.
        store.failSaves = false
        _ = try manager.pair(hostID: host)
        #expect(store.item(host)?.keys.contains { $0.id == key.id } == false)
    }

    @Test func forgettingTheLastKeyOfAHostDeletesItsItem() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [key])])
        let manager = try KeyManager(store: store, clock: ManualClock())
        try manager.forget(key.id)
        #expect(store.item(host) == nil)
        #expect(store.deleteCount == 1)
    }

    @Test func aFullRingReturnsFullAndWritesNothing() throws {
        let store = InMemoryKeyStore()
        let manager = try KeyManager(store: store, clock: ManualClock())
        for _ in 0..<KeyRing.capacity { _ = try manager.pair(hostID: HostID()) }
        let saves = store.saveCount
        guard case .full = try manager.pair(hostID: host) else {
            Issue.record("the 17th pairing must be refused as full")
            return
        }
        #expect(store.saveCount == saves)
        #expect(manager.snapshot.count == KeyRing.capacity)
    }

    @Test func aDamagedItemIsReportedAndNeverRewritten() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [key])])
        store.markDamaged(host)
        let manager = try KeyManager(store: store, clock: ManualClock())
        #expect(manager.unreadableHosts[host]?.code == .keyStoreDamaged)
        #expect(manager.connectOrder(for: host).isEmpty)
        let error = #expect(throws: SecurityError.self) { _ = try manager.pair(hostID: host) }
        #expect(error?.code == .keyStoreDamaged)
        #expect(store.saveCount == 0)
    }

    @Test func aHostListingReturnsTheReconnectAndSavesTheNewStates() throws {
        let pending = KeyFixtures.key(host, at: 1, .pending)
        let active = KeyFixtures.key(host, at: 2, .pending)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [pending, active])])
        let manager = try KeyManager(store: store, clock: ManualClock())
        let actions = try manager.hostListed(host, pending: [pending.id], active: [active.id])
        #expect(actions == [.reconnectNow(pending.id)])
        #expect(store.item(host)?.keys.first { $0.id == active.id }?.state == .active)
    }
}
