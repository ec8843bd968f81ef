import AetherSecurity
import Testing

@testable import AetherTransport

@Suite struct SessionTableStateMachineTests {
    typealias Table = SessionTableStateMachine
    let device = HostID()
    let active = KeyID()
    let pendingKey = KeyID()
    let refused = KeyID()
    let retired = KeyID()
    let source = UDPAddress.loopback(port: 4000)
    let start = SessionTime(monotonic: 50_000, wall: 1_800_000_000_000)

    func table(limits: SessionLimits = .standard) -> Table {
        Table(
            keys: [
                Table.Key(keyID: active, device: device, state: .active),
                Table.Key(keyID: pendingKey, device: device, state: .pending),
                Table.Key(keyID: refused, device: device, state: .refused),
                Table.Key(keyID: retired, device: device, state: .retired(retiredAt: 77)),
            ], limits: limits, seed: 3)
    }

    func hello(_ key: KeyID, _ timestamp: UInt64, intent: HelloIntent = .connect) -> Hello {
        (try? Hello(intent: intent, timestamp: timestamp, keyID: key, previousSessionID: 0))!
    }

    func acceptedSession(_ payload: Message2Payload?) -> UInt64? {
        if case .accept(let accept) = payload { return accept.sessionID }
        return nil
    }

    /// Accepts and commits a session under `key` at `now`.
    func commit(_ table: inout Table, _ key: KeyID, at now: SessionTime, intent: HelloIntent = .connect) -> UInt64 {
        let id = acceptedSession(table.helloAuthenticated(hello(key, now.wall, intent: intent), now: now))!
        _ = table.recordOpened(id, .control(.confirm), now: now)
        return id
    }

    @Test func unknownKeyIDsGetNoAnswer() {
        var t = table()
        #expect(t.message1Arrived([1], keyID: KeyID(), source: source, now: start) == .drop)
        #expect(t.message1Arrived([1], keyID: active, source: source, now: start) == .handshake)
    }

    @Test func anIdenticalMessage1IsAnsweredFromTheCacheForTwoSeconds() {
        var t = table()
        let m1: [UInt8] = [1, 3, 9, 9]
        #expect(t.message1Arrived(m1, keyID: active, source: source, now: start) == .handshake)
        let id = acceptedSession(t.helloAuthenticated(hello(active, start.wall), now: start))
        #expect(id != nil)
        _ = t.answered(message1: m1, message2: [2, 3, 7], now: start)
        #expect(
            t.message1Arrived(m1, keyID: active, source: source, now: start.advanced(by: 1_999)) == .resend([2, 3, 7]))
        #expect(
            t.message1Arrived([1, 3, 9, 8], keyID: active, source: source, now: start.advanced(by: 1_999)) == .handshake
        )
        // After the window the same bytes run the handshake again, and the replayed hello is Stale.
        let later = start.advanced(by: 2_000)
        _ = t.timerFired(now: later)
        #expect(t.message1Arrived(m1, keyID: active, source: source, now: later) == .handshake)
        guard case .stale = t.helloAuthenticated(hello(active, start.wall), now: later) else {
            Issue.record("a replayed hello must be Stale")
            return
        }
    }

    @Test func message1sAreRateLimitedPerSourceAddress() {
        var t = table()
        for _ in 0..<20 { #expect(t.message1Arrived([1], keyID: active, source: source, now: start) == .handshake) }
        #expect(t.message1Arrived([1], keyID: active, source: source, now: start) == .drop)
        let other = UDPAddress(ipv4: 0x7f00_0002, port: 4000)
        #expect(t.message1Arrived([1], keyID: active, source: other, now: start) == .handshake)
        #expect(t.message1Arrived([1], keyID: active, source: source, now: start.advanced(by: 99)) == .drop)
        #expect(t.message1Arrived([1], keyID: active, source: source, now: start.advanced(by: 100)) == .handshake)
        #expect(t.message1Arrived([1], keyID: active, source: source, now: start.advanced(by: 100)) == .drop)
    }

    @Test(arguments: [
        (Int64(-120_001), "stale"), (-120_000, "accept"), (30_000, "accept"), (30_001, "tooNew"),
    ])
    func theHelloTimestampWindowHasExactEdges(offset: Int64, expected: String) {
        var t = table()
        let stamp = UInt64(Int64(start.wall) + offset)
        let answer = t.helloAuthenticated(hello(active, stamp), now: start)
        switch answer {
        case .stale(let stale): #expect(expected == "stale" && stale.hostTime == start.wall)
        case .tooNew(let tooNew): #expect(expected == "tooNew" && tooNew.hostTime == start.wall)
        case .accept: #expect(expected == "accept")
        default: Issue.record("unexpected answer \(String(describing: answer))")
        }
    }

    @Test func aTimestampNotNewerThanTheLastAcceptedIsStale() {
        var t = table()
        #expect(acceptedSession(t.helloAuthenticated(hello(active, start.wall), now: start)) != nil)
        guard case .stale = t.helloAuthenticated(hello(active, start.wall), now: start) else {
            Issue.record("equal timestamp must be Stale")
            return
        }
        #expect(acceptedSession(t.helloAuthenticated(hello(active, start.wall + 1), now: start)) != nil)
    }

    @Test func aRetiredKeyIsRefusedWithItsTombstoneAndARefusedKeyWithPairAgain() {
        var t = table()
        guard case .tombstone(let tombstone) = t.helloAuthenticated(hello(retired, start.wall), now: start) else {
            Issue.record("expected a tombstone")
            return
        }
        #expect(tombstone.keyID == retired && tombstone.retiredAt == 77)
        #expect(t.helloAuthenticated(hello(refused, start.wall), now: start) == .pairAgain(PairAgain()))
    }

    @Test func sevenUncommittedAttemptsUnderAKeyMakeTheNextOneBusy() {
        var t = table()
        for i in 0..<7 {
            #expect(acceptedSession(t.helloAuthenticated(hello(active, start.wall + UInt64(i)), now: start)) != nil)
        }
        let later = start.advanced(by: 3_000)
        guard case .sessionBusy(let busy) = t.helloAuthenticated(hello(active, later.wall), now: later) else {
            Issue.record("expected SessionBusy")
            return
        }
        #expect(busy.retryAfterMilliseconds == 10_000)
        _ = t.timerFired(now: start.advanced(by: 13_000))
        #expect(
            acceptedSession(t.helloAuthenticated(hello(active, later.wall + 1), now: later.advanced(by: 10_000))) != nil
        )
    }

    @Test func aFullTableIsBusy() {
        var t = Table(keys: [Table.Key(keyID: active, device: device, state: .active)], capacity: 1, seed: 1)
        _ = t.helloAuthenticated(hello(active, start.wall), now: start)
        guard case .sessionBusy = t.helloAuthenticated(hello(active, start.wall + 1), now: start) else {
            Issue.record("expected SessionBusy")
            return
        }
    }

    @Test func aConfirmCommitsTheSessionAndTheSlotStatusGoesBack() {
        var t = table()
        let id = acceptedSession(t.helloAuthenticated(hello(active, start.wall), now: start))!
        let actions = t.recordOpened(id, .control(.confirm), now: start)
        #expect(actions.contains(.committed(sessionID: id, keyID: active)))
        #expect(actions.contains(.send(sessionID: id, .slotStatus(t.slots(for: device)!))))
        #expect(t.liveSessions == [id])
        // A later confirm is answered again (the first slot status may be lost).
        #expect(
            t.recordOpened(id, .control(.confirm), now: start).contains(
                .send(sessionID: id, .slotStatus(t.slots(for: device)!))))
    }

    @Test func anUnknownControlRecordNeverCommits() {
        var t = table()
        let id = acceptedSession(t.helloAuthenticated(hello(active, start.wall), now: start))!
        #expect(
            t.recordOpened(id, .unknownControl(type: 0x50), now: start).allSatisfy {
                if case .scheduleTimer = $0 { true } else { false }
            })
        #expect(t.recordOpened(id, .malformedControl(type: 0x43), now: start).count <= 1)
        #expect(t.liveSessions.isEmpty)
    }

    @Test func aNewCommittedSessionSupersedesTheLiveOneWithoutABYEAndTheOldDrainsOneSecond() {
        var t = table()
        let old = commit(&t, active, at: start)
        let now = start.advanced(by: 10)
        let new = acceptedSession(t.helloAuthenticated(hello(active, now.wall), now: now))!
        let actions = t.recordOpened(new, .control(.confirm), now: now)
        #expect(!actions.contains(.send(sessionID: old, .bye(.superseded))))
        #expect(!actions.contains { if case .send(old, _) = $0 { true } else { false } })
        #expect(t.liveSessions == [new])
        let edge = now.advanced(by: 999)
        #expect(
            t.recordOpened(old, .application(type: 2, bytes: [5]), now: edge).contains(
                .deliver(sessionID: old, type: 2, bytes: [5])))
        #expect(!t.timerFired(now: edge).contains(.discard(sessionID: old)))
        #expect(t.timerFired(now: now.advanced(by: 1_000)).contains(.discard(sessionID: old)))
        #expect(!t.opensRecords(old))
    }

    @Test func aSealedBYEClosesTheSession() {
        var t = table()
        let id = commit(&t, active, at: start)
        #expect(t.recordOpened(id, .control(.bye(.closed)), now: start).contains(.discard(sessionID: id)))
        #expect(!t.opensRecords(id))
    }

    @Test func aCountsQueryIsAnswered() {
        var t = table()
        let id = commit(&t, active, at: start)
        #expect(
            t.recordOpened(id, .control(.countsQuery(queryID: 42)), now: start).contains(
                .answerCounts(sessionID: id, queryID: 42)))
    }

    @Test func aLiveSessionWithoutRecordsWithinTheLivenessTimeoutIsClosed() {
        var t = table(
            limits: SessionLimits(
                livenessTimeout: 4_000, maxSessionAge: 60, maxCounter: 5_000, maxRecordPlaintext: 1_200))
        let id = commit(&t, active, at: start)
        _ = t.recordOpened(id, .control(.keepAlive), now: start.advanced(by: 1_000))
        #expect(!t.timerFired(now: start.advanced(by: 4_999)).contains(.discard(sessionID: id)))
        #expect(t.timerFired(now: start.advanced(by: 5_000)).contains(.discard(sessionID: id)))
    }

    @Test func aPromoteConnectMakesAPendingKeyActive() {
        var t = table()
        let id = acceptedSession(t.helloAuthenticated(hello(pendingKey, start.wall, intent: .promote), now: start))!
        let actions = t.recordOpened(id, .control(.confirm), now: start)
        #expect(actions.contains(.keyPromoted(pendingKey)))
        #expect(t.key(pendingKey)?.state == .active)
    }

    @Test func anUncommittedSessionExpiresAfterThirteenSeconds() {
        var t = table()
        let id = acceptedSession(t.helloAuthenticated(hello(active, start.wall), now: start))!
        #expect(!t.timerFired(now: start.advanced(by: 12_999)).contains(.discard(sessionID: id)))
        #expect(t.timerFired(now: start.advanced(by: 13_000)).contains(.discard(sessionID: id)))
    }
}
