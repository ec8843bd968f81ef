import AetherSecurity

/// One handshake attempt of `ReconnectStateMachine` and the session it may become, with its own timers:
/// message 1 resends, then confirms after the Accept, then a receive-only wait (secure-session doc section 4).
struct ReconnectAttempt: Sendable {
    /// Where the attempt is; the accepted session travels with the last two phases.
    enum Phase: Sendable {
        case handshake(startedAt: UInt64, nextResendAt: UInt64)
        case confirming(nextConfirmAt: UInt64, session: AcceptedSession)
        case receiveOnly(until: UInt64, session: AcceptedSession)
    }

    /// What `fire(at:)` found due.
    enum TimerOutcome: Sendable {
        /// Nothing due.
        case none
        /// The message 1 window ran out without an answer: the attempt is over.
        case handshakeExpired
        /// Message 1 must be sent again.
        case resendMessage1
        /// A fresh confirm must be sealed.
        case sendConfirm
        /// The confirm window ran out: the attempt is now receive-only.
        case confirmsRanOut
        /// The receive-only window ran out: the attempt is over.
        case receiveOnlyExpired
    }

    let id: AttemptID
    let keyID: KeyID
    /// The generation of the intent the attempt was made for.
    let generation: UInt64
    var phase: Phase

    /// A fresh attempt that has just sent message 1 at `now`.
    init(id: AttemptID, keyID: KeyID, generation: UInt64, startedAt now: UInt64) {
        self.id = id
        self.keyID = keyID
        self.generation = generation
        phase = .handshake(startedAt: now, nextResendAt: now + ReconnectTimers.message1Interval)
    }

    /// Whether the attempt still waits for its message 2.
    var isHandshake: Bool {
        if case .handshake = phase { return true }
        return false
    }

    /// The session the host accepted for this attempt, once it did.
    var session: AcceptedSession? {
        switch phase {
        case .handshake: return nil
        case .confirming(_, let session), .receiveOnly(_, let session): return session
        }
    }

    /// The instant until which a receive-only attempt is kept, nil in the other phases.
    var receiveOnlyUntil: UInt64? {
        if case .receiveOnly(let until, _) = phase { return until }
        return nil
    }

    /// The earliest instant at which `fire(at:)` has work.
    var deadline: UInt64 {
        switch phase {
        case .handshake(let startedAt, let nextResendAt):
            return min(nextResendAt, startedAt + ReconnectTimers.message1Window)
        case .confirming(let nextConfirmAt, let session):
            return min(nextConfirmAt, session.acceptedAt + ReconnectTimers.confirmWindow)
        case .receiveOnly(let until, _):
            return until
        }
    }

    /// The host answered Accept at `now`: confirms start.
    mutating func accepted(_ session: AcceptedSession, now: UInt64) {
        phase = .confirming(nextConfirmAt: now + ReconnectTimers.confirmInterval, session: session)
    }

    /// The attempt stops sending: a confirming attempt becomes receive-only (the host may already have
    /// committed it). Returns false for a handshake, which the caller discards instead.
    mutating func stopSending() -> Bool {
        switch phase {
        case .handshake: return false
        case .confirming(_, let session):
            phase = .receiveOnly(until: ReconnectTimers.receiveOnlyEnd(session), session: session)
        case .receiveOnly: break
        }
        return true
    }

    /// Runs the attempt's timers at monotonic instant `t` and says what fell due.
    mutating func fire(at t: UInt64) -> TimerOutcome {
        switch phase {
        case .handshake(let startedAt, var nextResendAt):
            if t >= startedAt + ReconnectTimers.message1Window { return .handshakeExpired }
            guard t >= nextResendAt else { return .none }
            while nextResendAt <= t { nextResendAt += ReconnectTimers.message1Interval }
            phase = .handshake(startedAt: startedAt, nextResendAt: nextResendAt)
            return .resendMessage1
        case .confirming(var nextConfirmAt, let session):
            if t >= session.acceptedAt + ReconnectTimers.confirmWindow {
                phase = .receiveOnly(until: ReconnectTimers.receiveOnlyEnd(session), session: session)
                return .confirmsRanOut
            }
            guard t >= nextConfirmAt else { return .none }
            while nextConfirmAt <= t { nextConfirmAt += ReconnectTimers.confirmInterval }
            phase = .confirming(nextConfirmAt: nextConfirmAt, session: session)
            return .sendConfirm
        case .receiveOnly(let until, _):
            return t >= until ? .receiveOnlyExpired : .none
        }
    }
}
