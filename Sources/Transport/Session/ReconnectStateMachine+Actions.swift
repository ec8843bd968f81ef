package import AetherSecurity

// The machine's vocabulary: what the driver hands in (`Answer`) and what the machine hands out (`Action` and
// the values it carries).
extension ReconnectStateMachine {
    /// What the hello of a new attempt says; the driver builds message 1 from it (under `keyID`'s PSK).
    package struct Hello: Sendable, Hashable {
        /// The key the attempt runs under.
        package let keyID: KeyID
        /// Connect, reconnect or promote.
        package let intent: HelloIntent
        /// The live session a reconnect replaces (0 for a connect).
        package let previousSessionID: UInt64
        /// Wall time plus the learnt offset, strictly increasing across attempts.
        package let timestamp: UInt64
    }

    /// A message 2 payload that authenticated under an attempt, as the driver parsed it.
    package enum Answer: Sendable, Hashable {
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
    package enum DownReason: Sendable, Hashable {
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
    package enum GiveUpReason: Sendable, Hashable {
        /// Stale or TooNew again after the one retry with the host's clock.
        case clockRejected
        /// The key can no longer be used (PairAgain, tombstone) and no session is live to fall back to.
        case noUsableKey
    }

    /// A session that became live.
    package struct SessionInfo: Sendable, Hashable {
        /// The attempt that made it (the driver's handle on its keys).
        package let attemptID: AttemptID
        /// The host's session id.
        package let sessionID: UInt64
        /// The key it runs under.
        package let keyID: KeyID
        /// The host's limits.
        package let limits: SessionLimits
        /// The host's name from the Accept.
        package let hostName: String
    }

    /// What the driver must do.
    package enum Action: Sendable, Hashable {
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
}
