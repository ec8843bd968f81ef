import Testing

@testable import AetherReceiver

/// The HTTP server's admission and header-deadline rules, on explicit times (nanoseconds).
@Suite struct ConnectionGuardStateMachineTests {
    static let second: Int64 = 1_000_000_000

    @Test func aClientIsRefusedPastItsLimitAndAdmittedAgainWhenOneCloses() {
        var machine = ConnectionGuardStateMachine(perClientLimit: 2, headerTimeoutNanoseconds: 0)
        let attacker = ClientAddressKey.v4(0x7F00_0002)
        let other = ClientAddressKey.v4(0x7F00_0001)
        for id in [UInt(1), 2] {
            let admitted = machine.admit(attacker)
            #expect(admitted)
            machine.opened(id, key: attacker, socket: Int32(id), now: 0)
        }
        let refusedOnce = machine.admit(attacker)
        let refusedTwice = machine.admit(attacker)
        let otherAdmitted = machine.admit(other)
        #expect(!refusedOnce && !refusedTwice && otherAdmitted)
        machine.opened(3, key: other, socket: 3, now: 0)
        #expect(machine.counters.refusedPerClient == 2)
        #expect(machine.openCount(of: attacker) == 2)
        machine.closed(1)
        machine.closed(1)
        #expect(machine.openCount(of: attacker) == 1)
        let admittedAgain = machine.admit(attacker)
        #expect(admittedAgain)
        #expect(machine.openCount == 2)
        #expect(machine.counters.accepted == 3)
    }

    @Test func noLimitAdmitsEveryone() {
        var machine = ConnectionGuardStateMachine(perClientLimit: 0, headerTimeoutNanoseconds: 0)
        for id in 0..<100 {
            let admitted = machine.admit(.v6Prefix(42))
            #expect(admitted)
            machine.opened(UInt(id), key: .v6Prefix(42), socket: Int32(id), now: 0)
        }
        #expect(machine.openCount(of: .v6Prefix(42)) == 100)
        let cut1 = machine.expired(now: .max)
        #expect(cut1.isEmpty)
    }

    @Test func theHeaderDeadlineIsTotalFromTheAcceptAndCutsOnce() {
        var machine = ConnectionGuardStateMachine(perClientLimit: 0, headerTimeoutNanoseconds: 2 * Self.second)
        machine.opened(7, key: .v4(1), socket: 70, now: 10 * Self.second)
        machine.opened(8, key: .v4(1), socket: 80, now: 11 * Self.second)
        // Nothing the client sends moves the deadline: only a complete header block clears it.
        let cut2 = machine.expired(now: 12 * Self.second - 1)
        #expect(cut2.isEmpty)
        let cut3 = machine.expired(now: 12 * Self.second)
        #expect(cut3 == [70])
        let cut4 = machine.expired(now: 12 * Self.second + 1)
        #expect(cut4.isEmpty)
        let cut5 = machine.expired(now: 13 * Self.second)
        #expect(cut5 == [80])
        #expect(machine.counters.closedHeaderTimeout == 2)
    }

    @Test func aRequestUnderWayHasNoHeaderDeadlineAndTheNextHeadGetsAFreshOne() {
        var machine = ConnectionGuardStateMachine(perClientLimit: 0, headerTimeoutNanoseconds: 2 * Self.second)
        machine.opened(1, key: .v4(1), socket: 10, now: 0)
        machine.headerReceived(1)
        // A long request (a slow body, a completion hashing a large object) is the idle timeout's business.
        let cut6 = machine.expired(now: 100 * Self.second)
        #expect(cut6.isEmpty)
        machine.requestEnded(1, now: 100 * Self.second, timedOut: false)
        let cut7 = machine.expired(now: 101 * Self.second)
        #expect(cut7.isEmpty)
        let cut8 = machine.expired(now: 102 * Self.second)
        #expect(cut8 == [10])
        machine.requestEnded(2, now: 0, timedOut: true)
        #expect(machine.counters.closedIdleTimeout == 1)
        #expect(machine.counters.closedHeaderTimeout == 1)
    }

    @Test func aKeptAliveConnectionWaitsForItsNextHeadAsLongAsTheKeepAliveTimeoutInAll() {
        var machine = ConnectionGuardStateMachine(
            perClientLimit: 0, headerTimeoutNanoseconds: 2 * Self.second, keepAliveTimeoutNanoseconds: 60 * Self.second)
        #expect(machine.keepAliveTimeout == 60 * Self.second)
        machine.opened(1, key: .v4(1), socket: 10, now: 0)
        machine.headerReceived(1)
        machine.requestEnded(1, now: 10 * Self.second, timedOut: false)
        let early = machine.expired(now: 69 * Self.second)
        #expect(early.isEmpty)
        let due = machine.expired(now: 70 * Self.second)
        #expect(due == [10])
        // Never shorter than the first head's deadline; no deadline at all when the header timeout is off.
        #expect(
            ConnectionGuardStateMachine(
                perClientLimit: 0, headerTimeoutNanoseconds: 5, keepAliveTimeoutNanoseconds: 1
            ).keepAliveTimeout == 5)
        var off = ConnectionGuardStateMachine(
            perClientLimit: 0, headerTimeoutNanoseconds: 0, keepAliveTimeoutNanoseconds: 60 * Self.second)
        off.opened(1, key: .v4(1), socket: 10, now: 0)
        off.requestEnded(1, now: 0, timedOut: false)
        let never = off.expired(now: .max)
        #expect(never.isEmpty)
    }

    @Test func aClosedConnectionsSocketIsNeverShut() {
        var machine = ConnectionGuardStateMachine(perClientLimit: 0, headerTimeoutNanoseconds: Self.second)
        machine.opened(1, key: .v4(1), socket: 10, now: 0)
        machine.opened(2, key: .v4(1), socket: -1, now: 0)
        machine.closed(1)
        let cut9 = machine.expired(now: 5 * Self.second)
        #expect(cut9.isEmpty)
        #expect(machine.counters.closedHeaderTimeout == 0)
    }

    /// Near the connection limit each admitted connection evicts a connection waiting for a request head of the
    /// address holding the most, the one waiting longest of those, so connections that never send one (a slowloris
    /// from many addresses) cannot hold every slot: libmicrohttpd closes a connection accepted at its limit before
    /// the accept policy runs, which locked every other client out while the attack lasted.
    @Test func nearTheLimitAWaitingConnectionOfTheBusiestAddressIsEvictedNeverOneRunningARequest() {
        var machine = ConnectionGuardStateMachine(
            perClientLimit: 0, headerTimeoutNanoseconds: 20 * Self.second, connectionLimit: 32)
        #expect(machine.evictionHeadroom == 2)
        // 29 open from three addresses (id % 3: 9, 10 and 10 of them): room left, nothing evicted.
        for id in 1...29 {
            machine.opened(UInt(id), key: .v4(UInt32(id % 3)), socket: Int32(100 + id), now: Int64(id) * Self.second)
        }
        #expect(machine.evictionDue() == nil)
        // The oldest waits for a request's answer (a long append): never chosen. Addresses 1 and 2 hold ten each;
        // of their waiting connections id 2 has waited longest.
        machine.headerReceived(1)
        machine.opened(30, key: .v4(9), socket: 130, now: 40 * Self.second)
        #expect(machine.evictionDue() == 102)
        // Chosen once, and no longer counted for its address: address 1 holds the most now.
        #expect(machine.evictionDue() == 104)
        // Nine each: the longest waiter of all. A kept-alive connection waits again from the end of its request:
        // younger than the others.
        machine.requestEnded(1, now: 41 * Self.second, timedOut: false)
        #expect(machine.evictionDue() == 103)
        #expect(machine.counters.closedEvicted == 3)
        // The evicted connections close: below the headroom again, nothing more is evicted.
        for id in [2, 3, 4] { machine.closed(UInt(id)) }
        #expect(machine.openCount == 27)
        #expect(machine.evictionDue() == nil)
        // Without a connection limit nothing is ever evicted.
        var unlimited = ConnectionGuardStateMachine(perClientLimit: 0, headerTimeoutNanoseconds: Self.second)
        for id in 1...100 { unlimited.opened(UInt(id), key: .v4(1), socket: Int32(id), now: 0) }
        #expect(unlimited.evictionDue() == nil)
    }

    /// Near the limit an address holding its equal share (the limit over the addresses holding connections, the
    /// new one's counted) is refused at accept, so attackers that reconnect the moment they are evicted cannot
    /// keep libmicrohttpd at its own limit, where it closes a legitimate client's connection before the policy
    /// runs; an address with fewer is admitted. Below the headroom only the per-client limit applies.
    @Test func nearTheLimitAnAddressHoldingItsEqualShareIsRefusedAndANewOneAdmitted() {
        var machine = ConnectionGuardStateMachine(
            perClientLimit: 16, headerTimeoutNanoseconds: 20 * Self.second, connectionLimit: 32)
        // 29 open, three attacking addresses: each may still connect.
        for id in 1...29 { machine.opened(UInt(id), key: .v4(UInt32(id % 3)), socket: Int32(id), now: 0) }
        let early = machine.admit(.v4(0))
        #expect(early)
        machine.opened(30, key: .v4(0), socket: 30, now: 0)
        // 30 open: 10 each, a third of 32 is 10: every attacker is refused, a new address admitted.
        for key in UInt32(0)...2 {
            let admitted = machine.admit(.v4(key))
            #expect(!admitted)
        }
        #expect(machine.counters.refusedFairShare == 3)
        #expect(machine.counters.refusedPerClient == 0)
        let newcomer = machine.admit(.v4(7))
        #expect(newcomer)
        // A connection being cut no longer counts: its address may replace it.
        let evicted = machine.evictionDue()
        #expect(evicted != nil)
        let refusedBefore = machine.counters.refusedFairShare
        var admitted = 0
        for key in UInt32(0)...2 where machine.admit(.v4(key)) { admitted += 1 }
        #expect(admitted == 1)
        #expect(machine.counters.refusedFairShare == refusedBefore + 2)
        // One address alone near the limit has the whole limit as its share.
        var alone = ConnectionGuardStateMachine(
            perClientLimit: 64, headerTimeoutNanoseconds: 20 * Self.second, connectionLimit: 32)
        for id in 1...31 { alone.opened(UInt(id), key: .v4(5), socket: Int32(id), now: 0) }
        let below = alone.admit(.v4(5))
        #expect(below)
        alone.opened(32, key: .v4(5), socket: 32, now: 0)
        let atShare = alone.admit(.v4(5))
        #expect(!atShare)
        #expect(alone.counters.refusedFairShare == 1)
        // Without a per-client limit (behind a proxy) no share is enforced: the proxy's address, holding far more
        // than half, is admitted beside a health check from another address (and evicts a waiting connection).
        var proxied = ConnectionGuardStateMachine(
            perClientLimit: 0, headerTimeoutNanoseconds: 20 * Self.second, connectionLimit: 32)
        for id in 1...29 { proxied.opened(UInt(id), key: .v4(5), socket: Int32(id), now: 0) }
        proxied.opened(30, key: .v4(6), socket: 30, now: 0)
        let proxy = proxied.admit(.v4(5))
        #expect(proxy)
        #expect(proxied.evictionDue() != nil)
        #expect(proxied.counters.refusedFairShare == 0)
    }
}
