import AetherIO
import AetherTestSupport
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
        store.failMarkers = true
        let retirement = manager.receivedTombstone(for: key.id, authenticated: true)
        #expect(retirement.itemFailure?.code == .systemCall)
        #expect(retirement.markerFailure?.code == .systemCall)
        #expect(!retirement.holdsAfterRestart)
        // The store still holds the key, yet the ring never offers it, not even after reading the store again.
        #expect(store.item(host)?.keys.map(\.id) == [key.id])
        #expect(manager.connectOrder(for: host).isEmpty)
        try manager.reload()
        #expect(manager.connectOrder(for: host).isEmpty)
        #expect(manager.snapshot.status(of: key.id) == .tombstoned)
        // Once the disk recovers, the next save of the host writes the deletion.
        store.failSaves = false
        store.failMarkers = false
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
        let listing = manager.hostListed(host, pending: [pending.id], active: [active.id])
        #expect(listing.actions == [.reconnectNow(pending.id)])
        #expect(listing.saveFailure == nil)
        #expect(store.item(host)?.keys.first { $0.id == active.id }?.state == .active)
    }

    // MARK: Retirement holds across a restart (issue 11)

    @Test func aTombstoneWritesTheRetiredMarkerBeforeTheItemAndBothHold() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        let other = KeyFixtures.key(host, at: 2, .active)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [key, other])])
        let manager = try KeyManager(store: store, clock: ManualClock(wall: .milliseconds(7_000)))
        let retirement = manager.receivedTombstone(for: key.id, authenticated: true)
        #expect(retirement.retired && retirement.itemFailure == nil && retirement.markerFailure == nil)
        #expect(store.retired.retiredAt(key.id) == 7_000)
        #expect(store.item(host)?.keys.map(\.id) == [other.id])
    }

    @Test func aKeyWhoseDeletionCouldNotBeSavedIsNotOfferedAfterARestart() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        let other = KeyFixtures.key(host, at: 2, .active)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [key, other])])
        let manager = try KeyManager(store: store, clock: ManualClock())
        store.failSaves = true
        let retirement = manager.receivedTombstone(for: key.id, authenticated: true)
        #expect(retirement.itemFailure?.code == .systemCall)
        #expect(retirement.markerFailure == nil)
        #expect(retirement.holdsAfterRestart)
        // The item on disk still holds the key (its save failed) ...
        #expect(store.item(host)?.keys.contains { $0.id == key.id } == true)
        // ... yet a new process over the same store never offers it, and its next save writes the deletion.
        let restarted = try KeyManager(store: store, clock: ManualClock())
        #expect(restarted.connectOrder(for: host).map(\.id) == [other.id])
        #expect(restarted.snapshot.status(of: key.id) == .tombstoned)
        store.failSaves = false
        try restarted.forget(other.id)
        #expect(store.item(host) == nil)
    }

    @Test func aKeyWhoseMarkerFailedButWhoseDeletionWasSavedIsNotOfferedAfterARestart() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        let other = KeyFixtures.key(host, at: 2, .active)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [key, other])])
        let manager = try KeyManager(store: store, clock: ManualClock())
        store.failMarkers = true
        let retirement = manager.receivedTombstone(for: key.id, authenticated: true)
        #expect(retirement.markerFailure != nil && retirement.itemFailure == nil && retirement.holdsAfterRestart)
        let restarted = try KeyManager(store: store, clock: ManualClock())
        #expect(restarted.connectOrder(for: host).map(\.id) == [other.id])
    }

    @Test func aRetirementThatCouldNotBeSavedIsWrittenByTheNextTombstoneForTheKey() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [key])])
        let manager = try KeyManager(store: store, clock: ManualClock())
        store.failSaves = true
        store.failMarkers = true
        #expect(!manager.receivedTombstone(for: key.id, authenticated: true).holdsAfterRestart)
        #expect(manager.connectOrder(for: host).isEmpty)
        store.failMarkers = false
        let again = manager.receivedTombstone(for: key.id, authenticated: true)
        #expect(again.retired && again.markerFailure == nil && again.holdsAfterRestart)
        #expect(store.retired.contains(key.id))
        #expect(try KeyManager(store: store, clock: ManualClock()).connectOrder(for: host).isEmpty)
    }

    @Test func anUnauthenticatedTombstoneWritesNoMarker() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [key])])
        let manager = try KeyManager(store: store, clock: ManualClock())
        let retirement = manager.receivedTombstone(for: key.id, authenticated: false)
        #expect(!retirement.retired)
        #expect(store.markerWrites == 0)
        #expect(manager.connectOrder(for: host).map(\.id) == [key.id])
    }

    @Test func aHostListingReturnsItsReconnectsEvenWhenTheSaveFails() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        let store = InMemoryKeyStore(items: [try KeyStoreItem(hostID: host, keys: [key])])
        let manager = try KeyManager(store: store, clock: ManualClock())
        store.failSaves = true
        let listing = manager.hostListed(host, pending: [key.id], active: [])
        #expect(listing.actions == [.reconnectNow(key.id)])
        #expect(listing.saveFailure?.code == .systemCall)
    }
}
