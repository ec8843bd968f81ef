package import AetherSecurity

/// The device's side of the secure session as a pure state machine: attempts, the live session, draining
/// sessions and their timers (secure-session v3, "Reconnect state machine", "What counts as live").
///
/// It does no I/O and no cryptography and reads no clock: the driver feeds it events stamped with a
/// `SessionTime` and carries out the actions it returns. Every attempt (and the session it may become) is
/// named by its `AttemptID`; the driver keeps the attempt's handshake state and record keys under that id
/// until the machine says `.discard`.
///
/// This type keeps the transitions; the pieces it moves between live beside it: `ReconnectAttempt` (an
/// attempt's phases and their timers), `LiveSession`, `DrainingSession`, `ReconnectIntent` and
/// `ReconnectTimers` (the constants, also named `Timing`). What goes in and out is in
/// `ReconnectStateMachine+Actions.swift`.
///
/// Timers (secure-session doc section 4): message 1 is resent unchanged every 250 ms for 2 s; after an
/// Accept a fresh confirm is sealed every 100 ms for 2 s; an attempt whose confirms ran out is kept
/// receive-only for 11 s (at most 6 such); a superseded session drains for 1 s; a live session closes when
/// no authenticated record arrived within the host's liveness timeout.
///
/// Intent rules:
/// - **Promotion only for the current intent.** An attempt becomes the live session only when it was
///   made for the intent that is current when the host's proof of commit arrives; an older intent's
///   attempt is discarded instead.
/// - **PairAgain keeps abandoned attempts.** PairAgain stops new attempts under the key (it is not
///   retired) but the receive-only attempts stay and can still be promoted.
/// - **Fallback to the live key only while a session is live.** When the wanted key can no longer be
///   used (PairAgain, tombstone, Forget), the machine falls back to the key of the live session, and only
///   when one is live; otherwise it makes no further attempts.
package struct ReconnectStateMachine: Sendable {
    /// The timer constants of secure-session v3 (milliseconds).
    package typealias Timing = ReconnectTimers

    private(set) var attempts: [ReconnectAttempt] = []
    private(set) var live: LiveSession?
    private(set) var draining: [DrainingSession] = []
    private(set) var intent: ReconnectIntent?
    private var generationCounter: UInt64 = 0
    /// Keys the host answered PairAgain for: never used for a new attempt.
    private(set) var blockedKeys: Set<KeyID> = []
    /// The key of the most recent session (live or not), for reporting.
    private(set) var lastSessionKey: KeyID?
    /// Host time minus local wall time, learnt from Accept, Stale and TooNew.
    private(set) var clockOffset: Int64 = 0
    private var lastHelloTimestamp: UInt64 = 0
    private var attemptIDs: AttemptIDGenerator

    /// A machine with no key wanted. `seed` makes attempt ids reproducible in tests; by default random.
    package init(seed: UInt64? = nil) {
        attemptIDs = AttemptIDGenerator(seed: seed)
    }

    // MARK: Queries

    /// The live session, if any.
    package var liveSession: SessionInfo? {
        guard let live else { return nil }
        return info(live.attemptID, live.session)
    }

    /// Whether a message 2 for this attempt should be tried (the attempt is still waiting for one).
    package func acceptsMessage2(_ id: AttemptID) -> Bool {
        attempts.first(where: { $0.id == id })?.isHandshake ?? false
    }

    /// The attempt whose session has this id and still opens records (live, draining, confirming,
    /// receive-only), or nil.
    package func attempt(forSession sessionID: UInt64) -> AttemptID? {
        if let live, live.session.sessionID == sessionID { return live.attemptID }
        if let drain = draining.first(where: { $0.session.sessionID == sessionID }) { return drain.attemptID }
        return attempts.first(where: { $0.session?.sessionID == sessionID })?.id
    }

    /// The key an attempt runs under.
    package func key(of id: AttemptID) -> KeyID? {
        if let live, live.attemptID == id { return live.session.keyID }
        if let drain = draining.first(where: { $0.attemptID == id }) { return drain.session.keyID }
        return attempts.first(where: { $0.id == id })?.keyID
    }

    /// The earliest instant at which `timerFired` has work, if any.
    package var nextDeadline: UInt64? {
        var deadlines = attempts.map(\.deadline) + draining.map(\.until)
        if let live { deadlines += live.deadlines }
        if let retryAt = intent?.retryAt, intent?.suspended == false { deadlines.append(retryAt) }
        return deadlines.min()
    }

    // MARK: Application events

    /// The application wants a session under `keyID` (`pending`: the ring holds it as pending, so the
    /// first connect asks the host to promote it). Starts an attempt unless a session under it is live.
    package mutating func want(_ keyID: KeyID, pending: Bool, now: SessionTime) -> [Action] {
        if blockedKeys.contains(keyID) { return finish([.suggestPairing(keyID)]) }
        if let live, live.session.keyID == keyID, !pending {
            newIntent(keyID, pending: false, satisfied: true)
            return finish([])
        }
        var actions = newIntent(keyID, pending: pending, satisfied: false)
        actions += startAttempt(now)
        return finish(actions)
    }

    /// The application closes the session: a sealed BYE, then nothing more until it wants a key again.
    package mutating func close(now: SessionTime) -> [Action] {
        var actions: [Action] = []
        if let live {
            actions += [
                .sendBye(live.attemptID, .closed), .sessionDown(sessionID: live.session.sessionID, reason: .closed),
            ]
            actions.append(.discard(live.attemptID))
            self.live = nil
        }
        actions += attempts.map { .discard($0.id) } + draining.map { .discard($0.attemptID) }
        attempts = []
        draining = []
        intent = nil
        return finish(actions)
    }

    /// The application forgot a key: a live session under it ends with a BYE, its attempts are discarded.
    package mutating func forget(_ keyID: KeyID, now: SessionTime) -> [Action] {
        var actions: [Action] = []
        if let live, live.session.keyID == keyID {
            actions += [.sendBye(live.attemptID, .keyForgotten), .discard(live.attemptID)]
            actions.append(.sessionDown(sessionID: live.session.sessionID, reason: .keyForgotten))
            self.live = nil
        }
        actions += dropAttempts(under: keyID)
        blockedKeys.remove(keyID)
        if intent?.keyID == keyID { actions += fallBack(from: keyID, now: now) }
        return finish(actions)
    }

    /// The network path changed: the live session is replaced by a reconnect (or, with none live, the
    /// wanted key's attempt restarts from the new path).
    package mutating func networkChanged(now: SessionTime) -> [Action] {
        guard let current = intent, !blockedKeys.contains(current.keyID) else { return finish([]) }
        var actions: [Action] = []
        if let live {
            self.live?.session.reconnectRequested = true
            actions += newIntent(live.session.keyID, pending: false, satisfied: false)
        } else {
            actions += newIntent(current.keyID, pending: current.pending, satisfied: false)
        }
        actions += startAttempt(now)
        return finish(actions)
    }

    // MARK: Network events

    /// A message 2 authenticated under attempt `id` (the driver already checked framing and the tag).
    package mutating func message2(_ id: AttemptID, _ answer: Answer, now: SessionTime) -> [Action] {
        guard let index = attempts.firstIndex(where: { $0.id == id }), attempts[index].isHandshake else {
            return finish([])
        }
        let attempt = attempts[index]
        let isCurrent = attempt.generation == intent?.generation
        var actions: [Action] = []
        switch answer {
        case .accept(let sessionID, let hostTime, let limits, let slots, let hostName):
            clockOffset = Int64(bitPattern: hostTime &- now.wall)
            let session = AcceptedSession(
                sessionID: sessionID, keyID: attempt.keyID, limits: limits, hostName: hostName,
                acceptedAt: now.monotonic, lastReceivedAt: now.monotonic, lastSentAt: now.monotonic)
            attempts[index].accepted(session, now: now.monotonic)
            actions += [.cycleEnded(attempt.keyID, answered: true), .slotStatus(slots), .sendConfirm(id)]
        case .stale(let hostTime), .tooNew(let hostTime):
            actions += removeAttempt(at: index)
            actions.append(.cycleEnded(attempt.keyID, answered: true))
            guard isCurrent, var current = intent else { break }
            if current.clockRetryUsed {
                current.suspended = true
                intent = current
                actions.append(.gaveUp(attempt.keyID, .clockRejected))
            } else {
                clockOffset = Int64(bitPattern: hostTime &- now.wall)
                // The host's clock is behind ours: the next stamp follows its clock, not our last one.
                if case .tooNew = answer { lastHelloTimestamp = 0 }
                current.clockRetryUsed = true
                intent = current
                actions += startAttempt(now)
            }
        case .pairAgain:
            actions += removeAttempt(at: index)
            blockedKeys.insert(attempt.keyID)
            actions += [.cycleEnded(attempt.keyID, answered: true), .suggestPairing(attempt.keyID)]
            // Receive-only attempts stay: the host may still commit one of them.
            if intent?.keyID == attempt.keyID { actions += fallBack(from: attempt.keyID, now: now) }
        case .sessionBusy(let retryAfter):
            actions += removeAttempt(at: index)
            actions.append(.cycleEnded(attempt.keyID, answered: true))
            // Confirming attempts end and receive-only ones are dropped; the live session stays.
            actions += dropAttempts(under: attempt.keyID)
            if isCurrent { intent?.retryAt = now.monotonic + UInt64(retryAfter) }
        case .tombstone(let retiredAt):
            actions += removeAttempt(at: index)
            actions.append(.keyTombstoned(attempt.keyID, retiredAt: retiredAt))
            actions += dropAttempts(under: attempt.keyID)
            for drain in draining where drain.session.keyID == attempt.keyID {
                actions.append(.discard(drain.attemptID))
            }
            draining.removeAll { $0.session.keyID == attempt.keyID }
            if let live, live.session.keyID == attempt.keyID {
                actions += [
                    .discard(live.attemptID), .sessionDown(sessionID: live.session.sessionID, reason: .keyRetired),
                ]
                self.live = nil
            }
            if intent?.keyID == attempt.keyID { actions += fallBack(from: attempt.keyID, now: now) }
        case .unparseable:
            actions += removeAttempt(at: index)
            actions.append(.cycleEnded(attempt.keyID, answered: true))
            if isCurrent { intent?.retryAt = now.monotonic + Timing.unparseableBackoff }
        }
        return finish(actions)
    }

    /// A record opened under attempt `id`'s session (AEAD verified and accepted by the replay window).
    /// `counter` is the record's counter, checked against the session's counter limit.
    package mutating func recordOpened(_ id: AttemptID, counter: UInt64, _ content: RecordContent, now: SessionTime)
        -> [Action]
    {
        var actions: [Action] = []
        if let index = attempts.firstIndex(where: { $0.id == id }) {
            let attempt = attempts[index]
            guard let session = attempt.session else { return finish([]) }
            // Unknown control types never prove a commit, and nothing is live yet to keep alive.
            guard content.provesCommit else { return finish([]) }
            attempts.remove(at: index)
            guard attempt.generation == intent?.generation else {
                return finish([.discard(attempt.id)])
            }
            actions += promote(attempt, session, now: now)
        }
        if let live, live.attemptID == id {
            self.live?.session.lastReceivedAt = now.monotonic
            actions += handleLive(content, counter: counter, now: now)
        } else if let drainIndex = draining.firstIndex(where: { $0.attemptID == id }) {
            switch content {
            case .application(let type, let body): actions.append(.deliver(type: type, body: body))
            case .control(.bye):
                actions.append(.discard(id))
                draining.remove(at: drainIndex)
            default: break
            }
        }
        return finish(actions)
    }

    /// The driver sealed a record under attempt `id`'s session with this counter.
    package mutating func recordSealed(_ id: AttemptID, counter: UInt64, now: SessionTime) -> [Action] {
        guard let live, live.attemptID == id else { return finish([]) }
        self.live?.session.lastSentAt = now.monotonic
        return finish(checkCounter(counter, now: now))
    }

    /// The timer requested by `.scheduleTimer` fired (or any later instant): runs everything due.
    package mutating func timerFired(now: SessionTime) -> [Action] {
        let t = now.monotonic
        var actions: [Action] = []
        var restart = false
        var index = 0
        while index < attempts.count {
            let attempt = attempts[index]
            switch attempts[index].fire(at: t) {
            case .none: break
            case .handshakeExpired:
                attempts.remove(at: index)
                actions += [.discard(attempt.id), .cycleEnded(attempt.keyID, answered: false)]
                if attempt.generation == intent?.generation { restart = true }
                continue
            case .resendMessage1: actions.append(.resendMessage1(attempt.id))
            case .sendConfirm: actions.append(.sendConfirm(attempt.id))
            case .confirmsRanOut:
                if attempt.generation == intent?.generation { restart = true }
            case .receiveOnlyExpired:
                attempts.remove(at: index)
                actions.append(.discard(attempt.id))
                continue
            }
            index += 1
        }
        actions += capReceiveOnly()
        for drain in draining where t >= drain.until { actions.append(.discard(drain.attemptID)) }
        draining.removeAll { t >= $0.until }
        if let live {
            if t >= live.livenessDeadline {
                actions += closeLive(reason: .livenessTimeout, bye: nil, now: now)
            } else if t >= live.ageLimit {
                actions += closeLive(reason: .limitReached, bye: .limitReached, now: now)
            } else {
                if t >= live.keepAliveDeadline {
                    self.live?.session.lastSentAt = t
                    actions.append(.sendKeepAlive(live.attemptID))
                }
                if !live.session.reconnectRequested, t >= live.ageReconnect {
                    actions += requestReconnect(now: now)
                }
            }
        }
        if let retryAt = intent?.retryAt, t >= retryAt {
            intent?.retryAt = nil
            restart = true
        }
        if restart, !hasHandshakeForCurrentIntent { actions += startAttempt(now) }
        return finish(actions)
    }

    // MARK: Internals

    private var hasHandshakeForCurrentIntent: Bool {
        attempts.contains { $0.generation == intent?.generation && $0.isHandshake }
    }

    private func info(_ id: AttemptID, _ session: AcceptedSession) -> SessionInfo {
        SessionInfo(
            attemptID: id, sessionID: session.sessionID, keyID: session.keyID, limits: session.limits,
            hostName: session.hostName)
    }

    /// Makes a new current intent. Attempts of older intents stop sending: handshakes are discarded and
    /// confirming attempts become receive-only (the host may already have committed them).
    @discardableResult
    private mutating func newIntent(_ keyID: KeyID, pending: Bool, satisfied: Bool) -> [Action] {
        generationCounter += 1
        intent = ReconnectIntent(generation: generationCounter, keyID: keyID, pending: pending, satisfied: satisfied)
        return stopSendingAttempts()
    }

    /// Starts an attempt for the current intent, if it still wants one.
    private mutating func startAttempt(_ now: SessionTime) -> [Action] {
        guard let current = intent, !current.satisfied, !current.suspended, current.retryAt == nil,
            !blockedKeys.contains(current.keyID)
        else { return [] }
        let id = attemptIDs.next()
        let stamp = max(UInt64(clamping: Int64(clamping: now.wall) &+ clockOffset), lastHelloTimestamp + 1)
        lastHelloTimestamp = stamp
        let hello: Hello
        if current.pending {
            hello = Hello(
                keyID: current.keyID, intent: .promote, previousSessionID: live?.session.sessionID ?? 0,
                timestamp: stamp)
        } else if let live {
            hello = Hello(
                keyID: current.keyID, intent: .reconnect, previousSessionID: live.session.sessionID, timestamp: stamp)
        } else {
            hello = Hello(keyID: current.keyID, intent: .connect, previousSessionID: 0, timestamp: stamp)
        }
        attempts.append(
            ReconnectAttempt(id: id, keyID: current.keyID, generation: current.generation, startedAt: now.monotonic))
        return [.sendMessage1(id, hello)]
    }

    /// The host proved it committed `attempt`'s session: it becomes live, the old live session drains.
    private mutating func promote(_ attempt: ReconnectAttempt, _ session: AcceptedSession, now: SessionTime)
        -> [Action]
    {
        if let old = live { draining.append(DrainingSession(superseding: old, now: now.monotonic)) }
        var fresh = session
        fresh.lastReceivedAt = now.monotonic
        fresh.lastSentAt = now.monotonic
        live = LiveSession(attemptID: attempt.id, session: fresh)
        lastSessionKey = session.keyID
        intent?.satisfied = true
        intent?.retryAt = nil
        // Other attempts of this intent stop sending; handshakes are dropped, confirms stop.
        var actions = stopSendingAttempts()
        actions.append(.sessionUp(info(attempt.id, fresh)))
        return actions
    }

    private mutating func handleLive(_ content: RecordContent, counter: UInt64, now: SessionTime) -> [Action] {
        guard let live else { return [] }
        var actions: [Action] = []
        switch content {
        case .application(let type, let body): actions.append(.deliver(type: type, body: body))
        case .control(.bye(let reason)):
            actions += [
                .discard(live.attemptID), .sessionDown(sessionID: live.session.sessionID, reason: .bye(reason)),
            ]
            self.live = nil
            intent?.satisfied = false
            // A host that closed deliberately is not called back; one at its limit is.
            if reason == .limitReached, let current = intent {
                newIntent(current.keyID, pending: false, satisfied: false)
                actions += startAttempt(now)
            } else {
                intent?.suspended = true
            }
            return actions
        case .control(.countsAnswer(let answer)): actions.append(.countsAnswer(answer))
        case .control(.slotStatus(let slots)): actions.append(.slotStatus(slots))
        case .control, .unknownControl, .malformedControl: break
        }
        return actions + checkCounter(counter, now: now)
    }

    private mutating func checkCounter(_ counter: UInt64, now: SessionTime) -> [Action] {
        guard let live else { return [] }
        let limit = UInt64(live.session.limits.maxCounter)
        if counter >= limit { return closeLive(reason: .limitReached, bye: nil, now: now) }
        if !live.session.reconnectRequested, counter >= ReconnectTimers.counterReconnect(limit) {
            return requestReconnect(now: now)
        }
        return []
    }

    private mutating func requestReconnect(now: SessionTime) -> [Action] {
        guard let live, let current = intent, !current.suspended, !blockedKeys.contains(live.session.keyID) else {
            return []
        }
        self.live?.session.reconnectRequested = true
        var actions = newIntent(live.session.keyID, pending: false, satisfied: false)
        actions += startAttempt(now)
        return actions
    }

    /// Ends the live session; an attempt starts when its key is still wanted.
    private mutating func closeLive(reason: DownReason, bye: ByeReason?, now: SessionTime) -> [Action] {
        guard let live else { return [] }
        var actions: [Action] = []
        if let bye { actions.append(.sendBye(live.attemptID, bye)) }
        actions += [.discard(live.attemptID), .sessionDown(sessionID: live.session.sessionID, reason: reason)]
        self.live = nil
        if let current = intent, !current.suspended, !blockedKeys.contains(current.keyID) {
            newIntent(current.keyID, pending: current.pending, satisfied: false)
            actions += startAttempt(now)
        }
        return actions
    }

    /// The current intent's key can no longer be used.
    private mutating func fallBack(from keyID: KeyID, now: SessionTime) -> [Action] {
        if let fallbackKey = live?.session.keyID, fallbackKey != keyID, !blockedKeys.contains(fallbackKey) {
            // A live session under another key: it stays, and later reconnects use its key.
            newIntent(fallbackKey, pending: false, satisfied: live != nil)
            return startAttempt(now)
        }
        // Nothing live to fall back to: no further attempts. The intent stays current (suspended), so a
        // receive-only attempt the host commits late can still become the session.
        intent?.suspended = true
        return [.gaveUp(keyID, .noUsableKey)]
    }

    /// Every attempt stops sending: handshakes are discarded, confirming attempts become receive-only (the
    /// host may already have committed them), and the receive-only cap applies.
    private mutating func stopSendingAttempts() -> [Action] {
        var actions: [Action] = []
        var index = 0
        while index < attempts.count {
            if attempts[index].stopSending() {
                index += 1
            } else {
                actions.append(.discard(attempts[index].id))
                attempts.remove(at: index)
            }
        }
        return actions + capReceiveOnly()
    }

    private mutating func removeAttempt(at index: Int) -> [Action] {
        let attempt = attempts.remove(at: index)
        return [.discard(attempt.id)]
    }

    /// Discards every attempt under `keyID`.
    private mutating func dropAttempts(under keyID: KeyID) -> [Action] {
        let dropped = attempts.filter { $0.keyID == keyID }
        attempts.removeAll { $0.keyID == keyID }
        return dropped.map { .discard($0.id) }
    }

    /// Keeps at most `maxReceiveOnly` receive-only attempts, dropping the ones that expire first.
    private mutating func capReceiveOnly() -> [Action] {
        // A plain loop: the optimiser of Swift 6.3.1 (CopyPropagation) crashes on the compactMap-of-map form.
        var receiveOnly: [(AttemptID, UInt64)] = []
        for attempt in attempts {
            if let until = attempt.receiveOnlyUntil { receiveOnly.append((attempt.id, until)) }
        }
        guard receiveOnly.count > Timing.maxReceiveOnly else { return [] }
        receiveOnly.sort { $0.1 < $1.1 }
        let dropped = Set(receiveOnly.prefix(receiveOnly.count - Timing.maxReceiveOnly).map(\.0))
        attempts.removeAll { dropped.contains($0.id) }
        return dropped.sorted().map { .discard($0) }
    }

    private func finish(_ actions: [Action]) -> [Action] {
        guard let deadline = nextDeadline else { return actions }
        return actions + [.scheduleTimer(at: deadline)]
    }
}
