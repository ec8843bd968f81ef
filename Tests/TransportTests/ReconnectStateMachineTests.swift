import AetherSecurity
import Testing

@testable import AetherTransport

/// Drives a `ReconnectStateMachine` with a manual clock (no sleeps) and records its actions.
struct ClientHarness {
    typealias Machine = ReconnectStateMachine
    var machine = Machine(seed: 7)
    var now = SessionTime(monotonic: 10_000, wall: 1_700_000_000_000)
    let start: UInt64 = 10_000
    var nextSessionID: UInt64 = 100

    static let noSlots = (try? SlotStatus.parse([0]))!
    static let limits = SessionLimits(
        livenessTimeout: 4_000, maxSessionAge: 60, maxCounter: 8_000, maxRecordPlaintext: 1_200)

    /// Milliseconds since the harness started.
    var elapsed: UInt64 { now.monotonic - start }

    mutating func at(_ elapsed: UInt64) {
        let target = start + elapsed
        precondition(target >= now.monotonic, "time only moves forward")
        now = now.advanced(by: target - now.monotonic)
    }

    mutating func fire(at elapsed: UInt64) -> [Machine.Action] {
        at(elapsed)
        return machine.timerFired(now: now)
    }

    mutating func want(_ key: KeyID, pending: Bool = false) -> [Machine.Action] {
        machine.want(key, pending: pending, now: now)
    }

    mutating func answer(_ id: AttemptID, _ answer: Machine.Answer) -> [Machine.Action] {
        machine.message2(id, answer, now: now)
    }

    mutating func accept(_ id: AttemptID, limits: SessionLimits = ClientHarness.limits) -> ([Machine.Action], UInt64) {
        nextSessionID += 1
        let actions = machine.message2(
            id,
            .accept(
                sessionID: nextSessionID, hostTime: now.wall, limits: limits, slots: ClientHarness.noSlots,
                hostName: "h"),
            now: now)
        return (actions, nextSessionID)
    }

    mutating func record(_ id: AttemptID, _ content: RecordContent, counter: UInt64 = 0) -> [Machine.Action] {
        machine.recordOpened(id, counter: counter, content, now: now)
    }

    /// Connects under `key` at the current time: want, Accept, the host's slot status record.
    mutating func connect(_ key: KeyID) -> (AttemptID, UInt64) {
        let id = Self.firstMessage1(want(key))!
        let (_, session) = accept(id)
        _ = record(id, .control(.slotStatus(Self.noSlots)))
        return (id, session)
    }

    static func firstMessage1(_ actions: [Machine.Action]) -> AttemptID? {
        for case .sendMessage1(let id, _) in actions { return id }
        return nil
    }

    static func hello(_ actions: [Machine.Action]) -> Machine.Hello? {
        for case .sendMessage1(_, let hello) in actions { return hello }
        return nil
    }

    static func count(_ actions: [Machine.Action], _ predicate: (Machine.Action) -> Bool) -> Int {
        actions.filter(predicate).count
    }

    static func sessionUp(_ actions: [Machine.Action]) -> Machine.SessionInfo? {
        for case .sessionUp(let info) in actions { return info }
        return nil
    }

    static func downReason(_ actions: [Machine.Action]) -> Machine.DownReason? {
        for case .sessionDown(_, let reason) in actions { return reason }
        return nil
    }

    static func timer(_ actions: [Machine.Action]) -> UInt64? {
        for case .scheduleTimer(let at) in actions { return at }
        return nil
    }

    /// The actions without the timer request.
    static func work(_ actions: [Machine.Action]) -> [Machine.Action] {
        actions.filter { if case .scheduleTimer = $0 { return false } else { return true } }
    }
}

@Suite struct ReconnectStateMachineTests {
    typealias H = ClientHarness
    let key = KeyID()
    let otherKey = KeyID()

    // MARK: Message 1

    @Test func message1IsResentAt250MillisecondsNotBefore() {
        var h = H()
        let actions = h.want(key)
        let id = H.firstMessage1(actions)!
        #expect(H.hello(actions)?.intent == .connect)
        #expect(H.timer(actions) == h.start + 250)
        #expect(H.work(h.fire(at: 249)).isEmpty)
        #expect(H.work(h.fire(at: 250)) == [.resendMessage1(id)])
        #expect(H.work(h.fire(at: 251)).isEmpty)
    }

    @Test func message1IsResentSevenTimesThenTheAttemptEndsAtTwoSeconds() {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        var resends = 0
        for t in stride(from: UInt64(1), through: 1_999, by: 1) {
            resends += H.count(h.fire(at: t)) { $0 == .resendMessage1(id) }
        }
        #expect(resends == 7)
        #expect(h.machine.acceptsMessage2(id))
        let end = h.fire(at: 2_000)
        #expect(end.contains(.discard(id)))
        #expect(end.contains(.cycleEnded(key, answered: false)))
        #expect(!end.contains(.resendMessage1(id)))
        let next = H.firstMessage1(end)
        #expect(next != nil && next != id)
        #expect(!h.machine.acceptsMessage2(id))
    }

    @Test func aLateMessage2ForAnEndedAttemptIsIgnored() {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        _ = h.fire(at: 2_000)
        let (actions, _) = h.accept(id)
        #expect(H.work(actions).isEmpty)
    }

    @Test func helloTimestampsStrictlyIncrease() {
        var h = H()
        let first = H.hello(h.want(key))!
        let second = H.hello(h.fire(at: 2_000))!
        #expect(second.timestamp > first.timestamp)
        let third = H.hello(h.machine.networkChanged(now: h.now))!
        #expect(third.timestamp == second.timestamp + 1)
    }

    // MARK: Confirms

    @Test func confirmsAreSealedEvery100MillisecondsForTwoSeconds() {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        h.at(300)
        let (accepted, _) = h.accept(id)
        #expect(accepted.contains(.sendConfirm(id)))
        #expect(accepted.contains(.cycleEnded(key, answered: true)))
        #expect(H.timer(accepted) == h.start + 400)
        #expect(H.work(h.fire(at: 399)).isEmpty)
        #expect(H.work(h.fire(at: 400)) == [.sendConfirm(id)])
        #expect(H.work(h.fire(at: 401)).isEmpty)
        var confirms = 2
        for t in stride(from: UInt64(402), through: 2_299, by: 1) {
            confirms += H.count(h.fire(at: t)) { $0 == .sendConfirm(id) }
        }
        #expect(confirms == 20)
        let end = h.fire(at: 2_300)
        #expect(!end.contains(.sendConfirm(id)))
        #expect(H.firstMessage1(end) != nil)
        #expect(h.machine.attempt(forSession: h.nextSessionID) == id)
    }

    @Test func aRecordOnTheConfirmingAttemptMakesTheSessionLive() throws {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        let (_, session) = h.accept(id)
        let slots = try SlotStatus(entries: [SlotStatus.Entry(keyID: key, state: .active)])
        let up = h.record(id, .control(.slotStatus(slots)))
        #expect(H.sessionUp(up)?.sessionID == session)
        #expect(up.contains(.slotStatus(slots)))
        #expect(H.work(h.fire(at: 100)).isEmpty)
        #expect(h.machine.liveSession?.attemptID == id)
    }

    @Test func applicationDataProvesTheCommitAndIsDelivered() {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        _ = h.accept(id)
        let up = h.record(id, .application(type: 3, bytes: [1, 2]))
        #expect(H.sessionUp(up) != nil)
        #expect(up.contains(.deliver(type: 3, body: [1, 2])))
    }

    @Test func anUnknownControlRecordNeverProvesACommit() {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        _ = h.accept(id)
        #expect(H.work(h.record(id, .unknownControl(type: 0x46))).isEmpty)
        #expect(h.machine.liveSession == nil)
    }

    // MARK: Receive-only attempts

    @Test func anAttemptWhoseConfirmsRanOutIsKeptReceiveOnlyFor11Seconds() {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        _ = h.accept(id)
        _ = h.fire(at: 2_000)
        #expect(!H.work(h.fire(at: 12_999)).contains(.discard(id)))
        #expect(h.machine.attempt(forSession: h.nextSessionID) == id)
        #expect(h.fire(at: 13_000).contains(.discard(id)))
        #expect(h.machine.attempt(forSession: h.nextSessionID) == nil)
    }

    @Test func aReceiveOnlyAttemptOfTheCurrentIntentIsPromotedUntilItsLastMillisecond() {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        _ = h.accept(id)
        for t in stride(from: UInt64(100), through: 12_999, by: 100) { _ = h.fire(at: t) }
        h.at(12_999)
        let up = h.record(id, .control(.keepAlive))
        #expect(H.sessionUp(up)?.attemptID == id)
    }

    @Test func atMostSixReceiveOnlyAttemptsAreKept() {
        var h = H()
        var ids: [AttemptID] = []
        var pending = H.firstMessage1(h.want(key))!
        var t: UInt64 = 0
        for _ in 0..<7 {
            ids.append(pending)
            _ = h.accept(pending)
            t += 2_000
            let actions = h.fire(at: t)
            pending = H.firstMessage1(actions)!
            if ids.count == 7 {
                #expect(actions.contains(.discard(ids[0])))
            } else {
                #expect(!actions.contains(.discard(ids[0])))
            }
        }
        #expect(h.machine.attempts.count { if case .receiveOnly = $0.phase { true } else { false } } == 6)
    }

    // MARK: Live session

    @Test func aSessionWithNoAuthenticatedRecordWithinTheLivenessTimeoutClosesAndReconnects() {
        var h = H()
        let (id, session) = h.connect(key)
        h.at(500)
        _ = h.record(id, .application(type: 0, bytes: []), counter: 1)
        #expect(H.downReason(h.fire(at: 4_499)) == nil)
        let down = h.fire(at: 4_500)
        #expect(down.contains(.sessionDown(sessionID: session, reason: .livenessTimeout)))
        #expect(down.contains(.discard(id)))
        #expect(H.hello(down)?.intent == .connect)
        #expect(h.machine.liveSession == nil)
    }

    @Test func anUnknownControlRecordStillCountsForLivenessOnALiveSession() {
        var h = H()
        let (id, _) = h.connect(key)
        h.at(3_000)
        #expect(H.work(h.record(id, .unknownControl(type: 0x99), counter: 1)).isEmpty)
        #expect(H.downReason(h.fire(at: 4_000)) == nil)
        #expect(H.downReason(h.fire(at: 7_000)) == .livenessTimeout)
    }

    @Test func keepAlivesGoOutAfterAQuarterOfTheLivenessTimeoutWithoutSending() {
        var h = H()
        let (id, _) = h.connect(key)
        #expect(!h.fire(at: 999).contains(.sendKeepAlive(id)))
        #expect(h.fire(at: 1_000).contains(.sendKeepAlive(id)))
        #expect(!h.fire(at: 1_001).contains(.sendKeepAlive(id)))
        h.at(1_500)
        _ = h.machine.recordSealed(id, counter: 5, now: h.now)
        #expect(!h.fire(at: 2_499).contains(.sendKeepAlive(id)))
        #expect(h.fire(at: 2_500).contains(.sendKeepAlive(id)))
    }

    @Test func aReconnectStartsAtSevenEighthsOfTheMaximumAge() {
        var h = H()
        let (id, session) = h.connect(key)
        for t in stride(from: UInt64(1_000), through: 52_000, by: 1_000) {
            _ = h.record(id, .control(.keepAlive), counter: t / 1_000)
            let actions = h.fire(at: t)
            #expect(H.firstMessage1(actions) == nil)
            h.at(t)
        }
        _ = h.record(id, .control(.keepAlive), counter: 60)
        #expect(H.firstMessage1(h.fire(at: 52_499)) == nil)
        let actions = h.fire(at: 52_500)
        let hello = H.hello(actions)
        #expect(hello?.intent == .reconnect)
        #expect(hello?.previousSessionID == session)
        #expect(h.machine.liveSession?.sessionID == session)
    }

    @Test func theSessionEndsWithABYEAtItsMaximumAge() {
        var h = H()
        let (id, session) = h.connect(key)
        for t in stride(from: UInt64(1_000), through: 59_000, by: 1_000) {
            h.at(t)
            _ = h.record(id, .control(.keepAlive), counter: t / 1_000)
            _ = h.machine.timerFired(now: h.now)
        }
        #expect(H.downReason(h.fire(at: 59_999)) == nil)
        let end = h.fire(at: 60_000)
        #expect(end.contains(.sendBye(id, .limitReached)))
        #expect(end.contains(.sessionDown(sessionID: session, reason: .limitReached)))
    }

    @Test(arguments: [false, true])
    func aReconnectStartsBeforeTheCounterLimit(sealing: Bool) {
        var h = H()
        let (id, session) = h.connect(key)
        func step(_ counter: UInt64) -> [ReconnectStateMachine.Action] {
            sealing
                ? h.machine.recordSealed(id, counter: counter, now: h.now)
                : h.record(id, .control(.keepAlive), counter: counter)
        }
        #expect(H.firstMessage1(step(6_999)) == nil)
        let hello = H.hello(step(7_000))
        #expect(hello?.intent == .reconnect && hello?.previousSessionID == session)
        #expect(H.firstMessage1(step(7_001)) == nil)
        #expect(H.downReason(step(8_000)) == .limitReached)
    }

    @Test func theOldSessionDrainsForOneSecondAfterANewOneIsConfirmed() {
        var h = H()
        let (old, oldSession) = h.connect(key)
        h.at(100)
        let newest = H.firstMessage1(h.machine.networkChanged(now: h.now))!
        let (_, newSession) = h.accept(newest)
        h.at(200)
        let up = h.record(newest, .control(.slotStatus(H.noSlots)))
        #expect(H.sessionUp(up)?.sessionID == newSession)
        #expect(!up.contains(where: { if case .sessionDown = $0 { true } else { false } }))
        #expect(!up.contains(where: { if case .sendBye = $0 { true } else { false } }))
        #expect(h.machine.attempt(forSession: oldSession) == old)
        h.at(1_199)
        #expect(h.record(old, .application(type: 1, bytes: [9])).contains(.deliver(type: 1, body: [9])))
        #expect(!h.fire(at: 1_199).contains(.discard(old)))
        #expect(h.fire(at: 1_200).contains(.discard(old)))
        #expect(h.machine.attempt(forSession: oldSession) == nil)
        #expect(H.work(h.record(old, .application(type: 1, bytes: [9]))).isEmpty)
    }

    @Test func aSealedBYEFromTheHostClosesTheSession() {
        var h = H()
        let (id, session) = h.connect(key)
        let actions = h.record(id, .control(.bye(.closed)), counter: 1)
        #expect(actions.contains(.sessionDown(sessionID: session, reason: .bye(.closed))))
        #expect(H.firstMessage1(actions) == nil)
        #expect(H.firstMessage1(h.fire(at: 10_000)) == nil)
    }

    @Test func closingSendsABYEAndStopsAttempts() {
        var h = H()
        let (id, session) = h.connect(key)
        let actions = h.machine.close(now: h.now)
        #expect(actions.contains(.sendBye(id, .closed)))
        #expect(actions.contains(.sessionDown(sessionID: session, reason: .closed)))
        #expect(h.machine.nextDeadline == nil)
    }

    @Test func countsAnswersAndSlotStatusAreReported() {
        var h = H()
        let (id, _) = h.connect(key)
        let counts = CountsAnswer(
            queryID: 9, recordsSealed: 1, recordsOpened: 2, authenticationFailures: 3, replaysRejected: 4,
            unknownControl: 5)
        #expect(h.record(id, .control(.countsAnswer(counts)), counter: 1).contains(.countsAnswer(counts)))
    }

    // MARK: Refusals

    @Test(arguments: [(true, Int64(500_000)), (false, -100_000)])
    func staleOrTooNewIsRetriedOnceWithTheHostClock(stale: Bool, hostAhead: Int64) {
        var h = H()
        let first = H.firstMessage1(h.want(key))!
        let hostTime = UInt64(Int64(h.now.wall) + hostAhead)
        let answer: ReconnectStateMachine.Answer = stale ? .stale(hostTime: hostTime) : .tooNew(hostTime: hostTime)
        let retry = h.answer(first, answer)
        #expect(retry.contains(.discard(first)))
        let hello = H.hello(retry)
        #expect(hello?.timestamp == hostTime)
        let second = H.firstMessage1(retry)!
        let giveUp = h.answer(second, answer)
        #expect(giveUp.contains(.gaveUp(key, .clockRejected)))
        #expect(H.firstMessage1(giveUp) == nil)
        #expect(H.firstMessage1(h.fire(at: 30_000)) == nil)
    }

    @Test func theClockRetryCountsPerIntent() {
        var h = H()
        let first = H.firstMessage1(h.want(key))!
        let retry = H.firstMessage1(h.answer(first, .stale(hostTime: h.now.wall)))!
        let third = H.firstMessage1(h.want(key))!
        #expect(third != retry)
        #expect(H.firstMessage1(h.answer(third, .tooNew(hostTime: h.now.wall))) != nil)
    }

    @Test func pairAgainStopsNewAttemptsUnderTheKeyWithoutRetiringIt() {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        let actions = h.answer(id, .pairAgain)
        #expect(actions.contains(.suggestPairing(key)))
        #expect(!actions.contains(where: { if case .keyTombstoned = $0 { true } else { false } }))
        #expect(H.firstMessage1(actions) == nil)
        #expect(H.firstMessage1(h.fire(at: 20_000)) == nil)
        #expect(H.work(h.want(key)) == [.suggestPairing(key)])
        #expect(H.firstMessage1(h.machine.networkChanged(now: h.now)) == nil)
    }

    @Test func sessionBusyLeavesTheLiveSessionAndDropsOtherAttemptsUnderTheKey() {
        var h = H()
        let (live, session) = h.connect(key)
        h.at(100)
        let confirming = H.firstMessage1(h.machine.networkChanged(now: h.now))!
        _ = h.accept(confirming)
        #expect(h.machine.attempt(forSession: h.nextSessionID) == confirming)
        h.at(2_100)
        let busyAttempt = H.firstMessage1(h.machine.timerFired(now: h.now))!
        let busy = h.answer(busyAttempt, .sessionBusy(retryAfter: 700))
        #expect(busy.contains(.discard(busyAttempt)))
        #expect(busy.contains(.discard(confirming)))
        #expect(!busy.contains(.discard(live)))
        #expect(H.downReason(busy) == nil)
        #expect(h.machine.liveSession?.sessionID == session)
        #expect(H.timer(busy)! <= h.now.monotonic + 700)
        #expect(H.firstMessage1(h.fire(at: 2_799)) == nil)
        #expect(H.hello(h.fire(at: 2_800))?.intent == .reconnect)
    }

    @Test func sessionBusyEndsAConfirmingAttemptWithNoLiveSession() {
        var h = H()
        let first = H.firstMessage1(h.want(key))!
        _ = h.accept(first)
        h.at(50)
        let second = H.firstMessage1(h.machine.networkChanged(now: h.now))!
        let busy = h.answer(second, .sessionBusy(retryAfter: 0))
        #expect(busy.contains(.discard(first)))
        #expect(h.machine.attempt(forSession: h.nextSessionID) == nil)
        #expect(H.hello(h.fire(at: 50)) != nil)
    }

    @Test func aTombstoneDeletesTheKeyAndClosesItsSession() {
        var h = H()
        let (_, session) = h.connect(key)
        h.at(100)
        let id = H.firstMessage1(h.machine.networkChanged(now: h.now))!
        let actions = h.answer(id, .tombstone(retiredAt: 42))
        #expect(actions.contains(.keyTombstoned(key, retiredAt: 42)))
        #expect(actions.contains(.sessionDown(sessionID: session, reason: .keyRetired)))
        #expect(actions.contains(.gaveUp(key, .noUsableKey)))
        #expect(H.firstMessage1(h.fire(at: 20_000)) == nil)
    }

    @Test func anUnparseableAnswerEndsTheAttemptAndRetriesAfterTwoSeconds() {
        var h = H()
        let id = H.firstMessage1(h.want(key))!
        h.at(10)
        let actions = h.answer(id, .unparseable)
        #expect(actions.contains(.discard(id)))
        #expect(H.sessionUp(actions) == nil)
        #expect(H.firstMessage1(h.fire(at: 2_009)) == nil)
        #expect(H.firstMessage1(h.fire(at: 2_010)) != nil)
    }

    @Test func aPendingKeyConnectsWithPromote() {
        var h = H()
        #expect(H.hello(h.want(key, pending: true))?.intent == .promote)
    }

    @Test func forgettingTheKeyOfTheLiveSessionSendsABYE() {
        var h = H()
        let (id, session) = h.connect(key)
        let actions = h.machine.forget(key, now: h.now)
        #expect(actions.contains(.sendBye(id, .keyForgotten)))
        #expect(actions.contains(.sessionDown(sessionID: session, reason: .keyForgotten)))
    }

    // MARK: Intent rules (each caught by mutation)

    @Test func onlyAnAttemptOfTheCurrentIntentIsPromoted() {
        var h = H()
        let old = H.firstMessage1(h.want(key))!
        _ = h.accept(old)
        h.at(50)
        let current = H.firstMessage1(h.want(otherKey))!
        // The old intent's attempt is receive-only now; the host's late proof must not make it live.
        let late = h.record(old, .control(.slotStatus(H.noSlots)))
        #expect(H.sessionUp(late) == nil)
        #expect(late.contains(.discard(old)))
        #expect(h.machine.liveSession == nil)
        _ = h.accept(current)
        #expect(H.sessionUp(h.record(current, .control(.keepAlive)))?.keyID == otherKey)
    }

    @Test func pairAgainKeepsAbandonedAttemptsWhichCanStillBePromoted() {
        var h = H()
        let abandoned = H.firstMessage1(h.want(key))!
        let (_, session) = h.accept(abandoned)
        let next = H.firstMessage1(h.fire(at: 2_000))!
        h.at(2_100)
        let refused = h.answer(next, .pairAgain)
        #expect(!refused.contains(.discard(abandoned)))
        h.at(2_200)
        let up = h.record(abandoned, .control(.slotStatus(H.noSlots)))
        #expect(H.sessionUp(up)?.sessionID == session)
    }

    @Test func theMachineFallsBackToTheLiveKeyOnlyWhileASessionIsLive() {
        // Live under `key`: PairAgain for `otherKey` falls back to `key` and keeps its session.
        var h = H()
        let (_, session) = h.connect(key)
        h.at(100)
        let switchAttempt = H.firstMessage1(h.want(otherKey))!
        let refused = h.answer(switchAttempt, .pairAgain)
        #expect(!refused.contains(.gaveUp(otherKey, .noUsableKey)))
        #expect(h.machine.liveSession?.sessionID == session)
        #expect(h.machine.intent?.keyID == key)
        // The fallback key is used for later reconnects.
        #expect(H.hello(h.machine.networkChanged(now: h.now))?.keyID == key)

        // Nothing live (the session under `key` timed out): no fallback, no attempt under `key`.
        var g = H()
        let (_, _) = g.connect(key)
        g.at(100)
        _ = g.machine.forget(key, now: g.now)
        g.at(200)
        let attempt = H.firstMessage1(g.want(otherKey))!
        let refusedAgain = g.answer(attempt, .pairAgain)
        #expect(refusedAgain.contains(.gaveUp(otherKey, .noUsableKey)))
        #expect(H.firstMessage1(refusedAgain) == nil)
        #expect(H.firstMessage1(g.fire(at: 30_000)) == nil)
    }

    @Test func noFallbackAfterTheLiveSessionTimedOut() {
        var h = H()
        let (_, _) = h.connect(key)
        h.at(100)
        let attempt = H.firstMessage1(h.want(otherKey))!
        // The switch attempt stays silent while the old session times out.
        _ = h.fire(at: 2_100)
        let retry = h.machine.attempts.last!.id
        _ = attempt
        let down = h.fire(at: 4_000)
        #expect(H.downReason(down) == .livenessTimeout)
        let current = H.firstMessage1(down) ?? retry
        let refused = h.answer(current, .pairAgain)
        #expect(refused.contains(.gaveUp(otherKey, .noUsableKey)))
        #expect(H.firstMessage1(refused) == nil)
        #expect(H.firstMessage1(h.fire(at: 30_000)) == nil)
    }
}
