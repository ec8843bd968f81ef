import AetherIO
import Testing

@testable import AetherSecurity

/// Builds keys for ring tests.
enum KeyFixtures {
    static func key(_ host: HostID, at milliseconds: UInt64, _ state: PairedKey.State = .pending) -> PairedKey {
        var key = PairedKey.generate(hostID: host, now: KeyTimestamp(millisecondsSinceEpoch: milliseconds))
        key.state = state
        return key
    }

    static func ring(_ keys: [PairedKey]) -> KeyRing {
        var ring = KeyRing()
        for key in keys { _ = ring.pair(key) }
        return ring
    }
}

@Suite struct KeyRingTests {
    let host = HostID()

    // MARK: Deletion: only an authenticated tombstone, a refused pairing, or Forget

    @Test func anAuthenticatedTombstoneDeletesTheKeyAndAsksForASave() {
        let key = KeyFixtures.key(host, at: 1, .active)
        var ring = KeyFixtures.ring([key])
        #expect(ring.receivedTombstone(for: key.id, authenticated: true) == [.save(host)])
        #expect(ring.key(key.id) == nil)
        #expect(ring.status(of: key.id) == .tombstoned)
        #expect(ring.item(for: host).keys.isEmpty)
    }

    @Test func anUnauthenticatedTombstoneDeletesNothing() {
        let key = KeyFixtures.key(host, at: 1, .active)
        var ring = KeyFixtures.ring([key])
        #expect(ring.receivedTombstone(for: key.id, authenticated: false).isEmpty)
        #expect(ring.key(key.id) == key)
        #expect(ring.connectOrder(for: host).map(\.id) == [key.id])
    }

    @Test func aRefusedPairingDeletesThePendingKey() {
        let key = KeyFixtures.key(host, at: 1, .pending)
        var ring = KeyFixtures.ring([key])
        #expect(ring.pairingRefused(key.id) == [.save(host)])
        #expect(ring.key(key.id) == nil)
        #expect(ring.status(of: key.id) == .deleted)
    }

    @Test func aPairingRefusalDoesNotRetireAnActiveKey() {
        let key = KeyFixtures.key(host, at: 1, .active)
        var ring = KeyFixtures.ring([key])
        #expect(ring.pairingRefused(key.id).isEmpty)
        #expect(ring.key(key.id) == key)
    }

    @Test(arguments: PairedKey.State.allCases)
    func forgetDeletesAKeyInAnyState(_ state: PairedKey.State) {
        let key = KeyFixtures.key(host, at: 1, state)
        let other = KeyFixtures.key(host, at: 2, state)
        var ring = KeyFixtures.ring([key, other])
        #expect(ring.forget(key.id) == [.save(host)])
        #expect(ring.status(of: key.id) == .deleted)
        #expect(ring.connectOrder(for: host).map(\.id) == [other.id])
    }

    @Test func forgettingAHostDeletesAllItsKeysAndNoOthers() {
        let otherHost = HostID()
        let keys = [KeyFixtures.key(host, at: 1), KeyFixtures.key(host, at: 2, .active)]
        let kept = KeyFixtures.key(otherHost, at: 3)
        var ring = KeyFixtures.ring(keys + [kept])
        #expect(ring.forget(host: host) == [.save(host)])
        #expect(ring.connectOrder(for: host).isEmpty)
        #expect(ring.connectOrder(for: otherHost).map(\.id) == [kept.id])
        #expect(keys.allSatisfy { ring.status(of: $0.id) == .deleted })
    }

    @Test func aHostListingThatLeavesAKeyOutKeepsItAsUnlisted() {
        let listed = KeyFixtures.key(host, at: 1, .active)
        let leftOut = KeyFixtures.key(host, at: 2, .active)
        var ring = KeyFixtures.ring([listed, leftOut])
        #expect(ring.hostListed(host, pending: [], active: [listed.id]) == [.save(host)])
        #expect(ring.key(leftOut.id)?.state == .unlisted)
        #expect(ring.count == 2)
    }

    @Test func noOtherEventDeletesAKey() {
        let pending = KeyFixtures.key(host, at: 1, .pending)
        let active = KeyFixtures.key(host, at: 2, .active)
        var ring = KeyFixtures.ring([pending, active])
        _ = ring.hostListed(host, pending: [], active: [])
        _ = ring.hostListed(HostID(), pending: [], active: [])
        for _ in 0..<10 {
            _ = ring.connectCycleEnded(pending.id, answered: false)
            _ = ring.connectCycleEnded(active.id, answered: false)
        }
        _ = ring.receivedTombstone(for: active.id, authenticated: false)
        _ = ring.pairingRefused(active.id)
        for index in 0..<20 { _ = ring.pair(KeyFixtures.key(HostID(), at: UInt64(10 + index))) }
        #expect(ring.key(pending.id) != nil && ring.key(active.id) != nil)
    }

    // MARK: A deleted key is never offered again

    @Test func aTombstonedKeyStaysDeletedWhenTheStoreStillHoldsIt() throws {
        let key = KeyFixtures.key(host, at: 1, .active)
        var ring = KeyFixtures.ring([key])
        let staleItem = ring.item(for: host)  // what the store holds if the save fails
        _ = ring.receivedTombstone(for: key.id, authenticated: true)
        ring.merge(staleItem)
        #expect(ring.key(key.id) == nil)
        #expect(ring.connectOrder(for: host).isEmpty)
        #expect(ring.status(of: key.id) == .tombstoned)
    }

    @Test func aDeletedKeyIDCannotBePairedAgain() {
        let key = KeyFixtures.key(host, at: 1)
        var ring = KeyFixtures.ring([key])
        _ = ring.receivedTombstone(for: key.id, authenticated: true)
        #expect(ring.pair(key) == .duplicate)
        #expect(ring.connectOrder(for: host).isEmpty)
    }

    // MARK: Connect order

    @Test func connectOrderIsPendingThenActiveThenUnlistedNewestFirst() {
        // Creation times interleave the states, so an order by time alone or by state alone is wrong.
        let keys = [
            KeyFixtures.key(host, at: 10, .unlisted), KeyFixtures.key(host, at: 20, .active),
            KeyFixtures.key(host, at: 30, .pending), KeyFixtures.key(host, at: 40, .unlisted),
            KeyFixtures.key(host, at: 50, .active), KeyFixtures.key(host, at: 60, .pending),
        ]
        let ring = KeyFixtures.ring(keys + [KeyFixtures.key(HostID(), at: 70)])
        let order = ring.connectOrder(for: host).map(\.createdAt.millisecondsSinceEpoch)
        #expect(order == [60, 30, 50, 20, 40, 10])
    }

    // MARK: Pending keys: immediate reconnect, pairing again after three silent cycles

    @Test func aKeyTheHostListsAsPendingGetsAnImmediateReconnect() {
        let key = KeyFixtures.key(host, at: 1, .pending)
        let active = KeyFixtures.key(host, at: 2, .active)
        var ring = KeyFixtures.ring([key, active])
        let actions = ring.hostListed(host, pending: [key.id], active: [active.id])
        #expect(actions == [.reconnectNow(key.id)])
        #expect(ring.key(key.id)?.state == .pending)
    }

    @Test func aKeyTheHostMovesToPendingIsSavedAndReconnected() {
        let key = KeyFixtures.key(host, at: 1, .active)
        var ring = KeyFixtures.ring([key])
        #expect(ring.hostListed(host, pending: [key.id], active: []) == [.save(host), .reconnectNow(key.id)])
    }

    @Test func theThirdSilentCycleOfAPendingKeySuggestsPairingAgainOnce() {
        let key = KeyFixtures.key(host, at: 1, .pending)
        var ring = KeyFixtures.ring([key])
        let answers = (1...5).map { _ in ring.connectCycleEnded(key.id, answered: false) }
        #expect(answers == [[], [], [.suggestPairingAgain(host)], [], []])
        #expect(ring.key(key.id) != nil)
    }

    @Test func anAnsweredCycleStartsTheSilentCountAgain() {
        let key = KeyFixtures.key(host, at: 1, .pending)
        var ring = KeyFixtures.ring([key])
        let pattern = [false, false, true, false, false, false]
        let answers = pattern.map { ring.connectCycleEnded(key.id, answered: $0) }
        #expect(answers == [[], [], [], [], [], [.suggestPairingAgain(host)]])
    }

    @Test(arguments: [PairedKey.State.active, .unlisted])
    func silentCyclesOfAConfirmedKeyNeverSuggestPairing(_ state: PairedKey.State) {
        let key = KeyFixtures.key(host, at: 1, state)
        var ring = KeyFixtures.ring([key])
        for _ in 0..<6 { #expect(ring.connectCycleEnded(key.id, answered: false).isEmpty) }
    }

    // MARK: Capacity

    @Test func aPairingPastSixteenKeysIsFullAndEvictsNothing() {
        let keys = (0..<KeyRing.capacity).map { KeyFixtures.key(HostID(), at: UInt64($0)) }
        var ring = KeyRing()
        for key in keys { #expect(ring.pair(key) == .paired([.save(key.hostID)])) }
        let extra = KeyFixtures.key(host, at: 1_000)
        #expect(ring.pair(extra) == .full)
        #expect(ring.count == 16)
        #expect(keys.allSatisfy { ring.key($0.id) == $0 })
        #expect(ring.key(extra.id) == nil && ring.status(of: extra.id) == nil)
    }

    @Test func forgettingAKeyOfAFullRingMakesRoomForThePairing() {
        let keys = (0..<KeyRing.capacity).map { KeyFixtures.key(HostID(), at: UInt64($0)) }
        var ring = KeyFixtures.ring(keys)
        let extra = KeyFixtures.key(host, at: 1_000)
        #expect(ring.pair(extra) == .full)
        _ = ring.forget(keys[3].id)
        #expect(ring.pair(extra) == .paired([.save(host)]))
        #expect(ring.count == 16)
    }

    @Test func aStoreHoldingMoreThanSixteenKeysLoadsWholeAndRefusesPairing() throws {
        let hosts = [HostID(), HostID()]
        let items = try hosts.map { hostID in
            try KeyStoreItem(hostID: hostID, keys: (0..<10).map { KeyFixtures.key(hostID, at: UInt64($0)) })
        }
        var ring = KeyRing(items: items)
        #expect(ring.count == 20)
        #expect(ring.pair(KeyFixtures.key(host, at: 99)) == .full)
        #expect(ring.count == 20)
    }

    // MARK: Printing

    @Test func keysPrintRedacted() {
        let key = KeyFixtures.key(host, at: 1)
        let secretHex = unsafe key.key.withUnsafeBytes { unsafe Hex.encode($0) }
        for text in [key.description, "\(key)", String(reflecting: key.key), "\(KeyFixtures.ring([key]))"] {
            #expect(!text.contains(secretHex))
        }
        #expect(key.description.contains("key: <redacted>"))
        #expect(key.key.description == "<redacted>")
    }
}
