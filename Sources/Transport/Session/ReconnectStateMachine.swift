public import AetherSecurity

/// The device's side of the secure session as a pure state machine: attempts, the live session, draining
/// sessions and their timers (secure-session v3, "Reconnect state machine", "What counts as live").
///
/// It does no I/O and no cryptography and reads no clock: the driver feeds it events stamped with a
/// `SessionTime` and carries out the actions it returns. Every attempt (and the session it may become) is
/// named by its `AttemptID`; the driver keeps the attempt's handshake state and record keys under that id
/// until the machine says `.discard`.
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
public struct ReconnectStateMachine: Sendable {
    /// The timer constants of secure-session v3 (milliseconds).
    public enum Timing {
        /// Message 1 is resent this often...
        public static let message1Interval: UInt64 = 250
        /// ...for this long, then the attempt ends.
        public static let message1Window: UInt64 = 2_000
        /// A fresh confirm is sealed this often...
        public static let confirmInterval: UInt64 = 100
        /// ...for this long after the Accept.
        public static let confirmWindow: UInt64 = 2_000
        /// An attempt whose confirms ran out is kept receive-only this long.
        public static let receiveOnlyWindow: UInt64 = 11_000
        /// At most this many receive-only attempts are kept (the oldest goes first).
        public static let maxReceiveOnly = 6
        /// A superseded session still opens records this long.
        public static let drainWindow: UInt64 = 1_000
        /// Wait after an authenticated but unparseable message 2 before the next attempt.
        public static let unparseableBackoff: UInt64 = 2_000
    }

    /// What the hello of a new attempt says; the driver builds message 1 from it (under `keyID`'s PSK).
    public struct Hello: Sendable, Hashable {
        /// The key the attempt runs under.
        public let keyID: KeyID
        /// Connect, reconnect or promote.
        public let intent: HelloIntent
        /// The live session a reconnect replaces (0 for a connect).
        public let previousSessionID: UInt64
        /// Wall time plus the learnt offset, strictly increasing across attempts.
        public let timestamp: UInt64
    }

    /// A message 2 payload that authenticated under an attempt, as the driver parsed it.
    public enum Answer: Sendable, Hashable {
        /// Accept: the host made the session; the client must confirm it.
        case accept(sessionID: UInt64, hostTime: UInt64, limits: SessionLimits, slots: SlotStatus, hostName: String)
        /// The hello timestamp was too old (or not newer than the last accepted).
        case stale(hostTime: UInt64)
        /// The hello timestamp was too far ahead.
        case tooNew(hostTime: UInt64)
        /// The host will not open sessions under this key any more.
        case pairAgain
        /// The host cannot take the session now.
        case sessionBusy(retryAfter: UInt32)
        /// The host deleted the key (the key id was already checked against the attempt's).
        case tombstone(retiredAt: UInt64)
        /// Authenticated, but the payload does not parse: the attempt is over and no session is made.
        case unparseable
    }

    /// Why a session went down.
    public enum DownReason: Sendable, Hashable {
        /// No authenticated record within the liveness timeout.
        case livenessTimeout
        /// The host sent a sealed BYE.
        case bye(ByeReason)
        /// The session reached its age or counter limit.
        case limitReached
        /// The application closed it.
        case closed
        /// The application forgot its key.
        case keyForgotten
        /// The host deleted its key.
        case keyRetired
    }

    /// Why the machine stopped making attempts for the current intent.
    public enum GiveUpReason: Sendable, Hashable {
        /// Stale or TooNew again after the one retry with the host's clock.
        case clockRejected
        /// The key can no longer be used (PairAgain, tombstone) and no session is live to fall back to.
        case noUsableKey
    }

    /// A session that became live.
    public struct SessionInfo: Sendable, Hashable {
        /// The attempt that made it (the driver's handle on its keys).
        public let attemptID: AttemptID
        /// The host's session id.
        public let sessionID: UInt64
        /// The key it runs under.
        public let keyID: KeyID
        /// The host's limits.
        public let limits: SessionLimits
        /// The host's name from the Accept.
        public let hostName: String
    }

    /// What the driver must do.
    public enum Action: Sendable, Hashable {
        /// Build message 1 for a new attempt from the hello, keep its bytes, send them.
        case sendMessage1(AttemptID, Hello)
        /// Send the attempt's message 1 again, byte for byte.
        case resendMessage1(AttemptID)
        /// Seal a fresh Confirm (`0x40`) under the attempt's session and send it.
        case sendConfirm(AttemptID)
        /// Seal a Keep-alive (`0x45`) under the attempt's session and send it.
        case sendKeepAlive(AttemptID)
        /// Seal a BYE under the attempt's session and send it.
        case sendBye(AttemptID, ByeReason)
        /// Forget the attempt's handshake state and session keys.
        case discard(AttemptID)
        /// Hand application data to the application.
        case deliver(type: UInt8, body: [UInt8])
        /// The host answered a counts query.
        case countsAnswer(CountsAnswer)
        /// A session became live (a previous one, if any, now drains).
        case sessionUp(SessionInfo)
        /// The live session ended.
        case sessionDown(sessionID: UInt64, reason: DownReason)
        /// The host's authenticated view of this device's keys (for `KeyRing.hostListed`).
        case slotStatus(SlotStatus)
        /// A connect cycle under the key ended (for `KeyRing.connectCycleEnded`).
        case cycleEnded(KeyID, answered: Bool)
        /// The host asked to pair again: no new attempts under the key (it is kept).
        case suggestPairing(KeyID)
        /// The host proved it deleted the key: the device deletes it too (`KeyRing.receivedTombstone`).
        case keyTombstoned(KeyID, retiredAt: UInt64)
        /// No more attempts for the current intent.
        case gaveUp(KeyID, GiveUpReason)
        /// Call `timerFired` at this monotonic instant (replaces any earlier request).
        case scheduleTimer(at: UInt64)
    }

    struct Session: Sendable {
        let sessionID: UInt64
        let keyID: KeyID
        let limits: SessionLimits
        let hostName: String
        let acceptedAt: UInt64
        var lastReceivedAt: UInt64
        var lastSentAt: UInt64
        var reconnectRequested = false
    }

    enum Phase: Sendable {
        case handshake(startedAt: UInt64, nextResendAt: UInt64)
        case confirming(nextConfirmAt: UInt64, session: Session)
        case receiveOnly(until: UInt64, session: Session)
    }

    struct Attempt: Sendable {
        let id: AttemptID
        let keyID: KeyID
        let generation: UInt64
        var phase: Phase
    }

    struct Intent: Sendable {
        let generation: UInt64
        let keyID: KeyID
        let pending: Bool
        /// A session of this intent is live.
        var satisfied: Bool
        /// No further attempts (PairAgain, clock rejected twice).
        var suspended = false
        var clockRetryUsed = false
        /// Next attempt not before this instant (SessionBusy, unparseable answer).
        var retryAt: UInt64?
    }

    struct Live: Sendable {
        let attemptID: AttemptID
        var session: Session
    }

    struct Draining: Sendable {
        let attemptID: AttemptID
        let session: Session
        let until: UInt64
    }

    private(set) var attempts: [Attempt] = []
    private(set) var live: Live?
    private(set) var draining: [Draining] = []
    private(set) var intent: Intent?
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
    public init(seed: UInt64? = nil) {
        attemptIDs = AttemptIDGenerator(seed: seed)
    }

    // MARK: Queries

    /// The live session, if any.
    public var liveSession: SessionInfo? {
        guard let live else { return nil }
        return info(live.attemptID, live.session)
    }

    /// Whether a message 2 for this attempt should be tried (the attempt is still waiting for one).
    public func acceptsMessage2(_ id: AttemptID) -> Bool {
        guard let attempt = attempts.first(where: { $0.id == id }), case .handshake = attempt.phase else {
            return false
        }
        return true
    }

    /// The attempt whose session has this id and still opens records (live, draining, confirming,
    /// receive-only), or nil.
    public func attempt(forSession sessionID: UInt64) -> AttemptID? {
        if let live, live.session.sessionID == sessionID { return live.attemptID }
        if let drain = draining.first(where: { $0.session.sessionID == sessionID }) { return drain.attemptID }
        for attempt in attempts {
            switch attempt.phase {
            case .confirming(_, let session), .receiveOnly(_, let session):
                if session.sessionID == sessionID { return attempt.id }
            case .handshake: continue
            }
        }
        return nil
    }

    /// The key an attempt runs under.
    public func key(of id: AttemptID) -> KeyID? {
        if let live, live.attemptID == id { return live.session.keyID }
        if let drain = draining.first(where: { $0.attemptID == id }) { return drain.session.keyID }
        return attempts.first(where: { $0.id == id })?.keyID
    }

    /// The earliest instant at which `timerFired` has work, if any.
    public var nextDeadline: UInt64? {
        var deadlines: [UInt64] = []
        for attempt in attempts {
            switch attempt.phase {
            case .handshake(let startedAt, let nextResendAt):
                deadlines.append(min(nextResendAt, startedAt + Timing.message1Window))
            case .confirming(let nextConfirmAt, let session):
                deadlines.append(min(nextConfirmAt, session.acceptedAt + Timing.confirmWindow))
            case .receiveOnly(let until, _):
                deadlines.append(until)
            }
        }
        deadlines += draining.map(\.until)
        if let live {
            let session = live.session
            deadlines.append(session.lastReceivedAt + UInt64(session.limits.livenessTimeout))
            deadlines.append(session.lastSentAt + Self.keepAliveInterval(session.limits))
            deadlines.append(Self.ageLimit(session))
            if !session.reconnectRequested { deadlines.append(Self.ageReconnect(session)) }
        }
        if let retryAt = intent?.retryAt, intent?.suspended == false { deadlines.append(retryAt) }
        return deadlines.min()
    }

    // MARK: Application events

    /// The application wants a session under `keyID` (`pending`: the ring holds it as pending, so the
    /// first connect asks the host to promote it). Starts an attempt unless a session under it is live.
    public mutating func want(_ keyID: KeyID, pending: Bool, now: SessionTime) -> [Action] {
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
    public mutating func close(now: SessionTime) -> [Action] {
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
    public mutating func forget(_ keyID: KeyID, now: SessionTime) -> [Action] {
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
    public mutating func networkChanged(now: SessionTime) -> [Action] {
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
    public mutating func message2(_ id: AttemptID, _ answer: Answer, now: SessionTime) -> [Action] {
        guard let index = attempts.firstIndex(where: { $0.id == id }), case .handshake = attempts[index].phase else {
            return finish([])
        }
        let attempt = attempts[index]
        let isCurrent = attempt.generation == intent?.generation
        var actions: [Action] = []
        switch answer {
        case .accept(let sessionID, let hostTime, let limits, let slots, let hostName):
            clockOffset = Int64(bitPattern: hostTime &- now.wall)
            let session = Session(
                sessionID: sessionID, keyID: attempt.keyID, limits: limits, hostName: hostName,
                acceptedAt: now.monotonic, lastReceivedAt: now.monotonic, lastSentAt: now.monotonic)
            attempts[index].phase = .confirming(nextConfirmAt: now.monotonic + Timing.confirmInterval, session: session)
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
    public mutating func recordOpened(_ id: AttemptID, counter: UInt64, _ content: RecordContent, now: SessionTime)
        -> [Action]
    {
        var actions: [Action] = []
        if let index = attempts.firstIndex(where: { $0.id == id }) {
            let attempt = attempts[index]
            let session: Session
            switch attempt.phase {
            case .handshake: return finish([])
            case .confirming(_, let value), .receiveOnly(_, let value): session = value
            }
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
    public mutating func recordSealed(_ id: AttemptID, counter: UInt64, now: SessionTime) -> [Action] {
        guard let live, live.attemptID == id else { return finish([]) }
        self.live?.session.lastSentAt = now.monotonic
        return finish(checkCounter(counter, now: now))
    }

    /// The timer requested by `.scheduleTimer` fired (or any later instant): runs everything due.
    public mutating func timerFired(now: SessionTime) -> [Action] {
        let t = now.monotonic
        var actions: [Action] = []
        var restart = false
        var index = 0
        while index < attempts.count {
            let attempt = attempts[index]
            switch attempt.phase {
            case .handshake(let startedAt, var nextResendAt):
                if t >= startedAt + Timing.message1Window {
                    attempts.remove(at: index)
                    actions += [.discard(attempt.id), .cycleEnded(attempt.keyID, answered: false)]
                    if attempt.generation == intent?.generation { restart = true }
                    continue
                }
                if t >= nextResendAt {
                    while nextResendAt <= t { nextResendAt += Timing.message1Interval }
                    attempts[index].phase = .handshake(startedAt: startedAt, nextResendAt: nextResendAt)
                    actions.append(.resendMessage1(attempt.id))
                }
            case .confirming(var nextConfirmAt, let session):
                if t >= session.acceptedAt + Timing.confirmWindow {
                    attempts[index].phase = .receiveOnly(
                        until: session.acceptedAt + Timing.confirmWindow + Timing.receiveOnlyWindow, session: session)
                    if attempt.generation == intent?.generation { restart = true }
                } else if t >= nextConfirmAt {
                    while nextConfirmAt <= t { nextConfirmAt += Timing.confirmInterval }
                    attempts[index].phase = .confirming(nextConfirmAt: nextConfirmAt, session: session)
                    actions.append(.sendConfirm(attempt.id))
                }
            case .receiveOnly(let until, _):
                if t >= until {
                    attempts.remove(at: index)
                    actions.append(.discard(attempt.id))
                    continue
                }
            }
            index += 1
        }
        actions += capReceiveOnly()
        for drain in draining where t >= drain.until { actions.append(.discard(drain.attemptID)) }
        draining.removeAll { t >= $0.until }
        if let live {
            let session = live.session
            if t >= session.lastReceivedAt + UInt64(session.limits.livenessTimeout) {
                actions += closeLive(reason: .livenessTimeout, bye: nil, now: now)
            } else if t >= Self.ageLimit(session) {
                actions += closeLive(reason: .limitReached, bye: .limitReached, now: now)
            } else {
                if t >= session.lastSentAt + Self.keepAliveInterval(session.limits) {
                    self.live?.session.lastSentAt = t
                    actions.append(.sendKeepAlive(live.attemptID))
                }
                if !session.reconnectRequested, t >= Self.ageReconnect(session) {
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
        attempts.contains { attempt in
            guard attempt.generation == intent?.generation else { return false }
            if case .handshake = attempt.phase { return true }
            return false
        }
    }

    private func info(_ id: AttemptID, _ session: Session) -> SessionInfo {
        SessionInfo(
            attemptID: id, sessionID: session.sessionID, keyID: session.keyID, limits: session.limits,
            hostName: session.hostName)
    }

    /// Makes a new current intent. Attempts of older intents stop sending: handshakes are discarded and
    /// confirming attempts become receive-only (the host may already have committed them).
    @discardableResult
    private mutating func newIntent(_ keyID: KeyID, pending: Bool, satisfied: Bool) -> [Action] {
        generationCounter += 1
        intent = Intent(generation: generationCounter, keyID: keyID, pending: pending, satisfied: satisfied)
        var actions: [Action] = []
        var index = 0
        while index < attempts.count {
            switch attempts[index].phase {
            case .handshake:
                actions.append(.discard(attempts[index].id))
                attempts.remove(at: index)
                continue
            case .confirming(_, let session):
                attempts[index].phase = .receiveOnly(
                    until: session.acceptedAt + Timing.confirmWindow + Timing.receiveOnlyWindow, session: session)
            case .receiveOnly: break
            }
            index += 1
        }
        return actions + capReceiveOnly()
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
            Attempt(
                id: id, keyID: current.keyID, generation: current.generation,
                phase: .handshake(startedAt: now.monotonic, nextResendAt: now.monotonic + Timing.message1Interval)))
        return [.sendMessage1(id, hello)]
    }

    /// The host proved it committed `attempt`'s session: it becomes live, the old live session drains.
    private mutating func promote(_ attempt: Attempt, _ session: Session, now: SessionTime) -> [Action] {
        var actions: [Action] = []
        if let old = live {
            draining.append(
                Draining(attemptID: old.attemptID, session: old.session, until: now.monotonic + Timing.drainWindow))
        }
        var fresh = session
        fresh.lastReceivedAt = now.monotonic
        fresh.lastSentAt = now.monotonic
        live = Live(attemptID: attempt.id, session: fresh)
        lastSessionKey = session.keyID
        intent?.satisfied = true
        intent?.retryAt = nil
        // Other attempts of this intent stop sending; handshakes are dropped, confirms stop.
        var index = 0
        while index < attempts.count {
            switch attempts[index].phase {
            case .handshake:
                actions.append(.discard(attempts[index].id))
                attempts.remove(at: index)
                continue
            case .confirming(_, let other):
                attempts[index].phase = .receiveOnly(
                    until: other.acceptedAt + Timing.confirmWindow + Timing.receiveOnlyWindow, session: other)
            case .receiveOnly: break
            }
            index += 1
        }
        actions += capReceiveOnly()
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
        if !live.session.reconnectRequested, counter >= Self.counterReconnect(limit) {
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
        var receiveOnly: [(AttemptID, UInt64)] = attempts.compactMap { attempt in
            if case .receiveOnly(let until, _) = attempt.phase { return (attempt.id, until) }
            return nil
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

    /// Keep-alives go out after a quarter of the liveness timeout without sending.
    static func keepAliveInterval(_ limits: SessionLimits) -> UInt64 { UInt64(limits.livenessTimeout) / 4 }

    /// The age at which the session must be gone.
    static func ageLimit(_ session: Session) -> UInt64 {
        session.acceptedAt + UInt64(session.limits.maxSessionAge) * 1_000
    }

    /// The reconnect starts at seven eighths of the maximum age, well before the limit.
    static func ageReconnect(_ session: Session) -> UInt64 {
        session.acceptedAt + UInt64(session.limits.maxSessionAge) * 1_000 / 8 * 7
    }

    /// The reconnect starts when a counter reaches seven eighths of the maximum.
    static func counterReconnect(_ maxCounter: UInt64) -> UInt64 { maxCounter / 8 * 7 }
}
