/// The client's timer constants of secure-session v3 (milliseconds) and the deadlines derived from them.
///
/// `ReconnectStateMachine.Timing` names this type. Secure-session doc section 4: message 1 is resent unchanged
/// every 250 ms for 2 s; after an Accept a fresh confirm is sealed every 100 ms for 2 s; an attempt whose
/// confirms ran out is kept receive-only for 11 s (at most 6 such); a superseded session drains for 1 s.
package enum ReconnectTimers {
    /// Message 1 is resent this often...
    package static let message1Interval: UInt64 = 250
    /// ...for this long, then the attempt ends.
    package static let message1Window: UInt64 = 2_000
    /// A fresh confirm is sealed this often...
    package static let confirmInterval: UInt64 = 100
    /// ...for this long after the Accept.
    package static let confirmWindow: UInt64 = 2_000
    /// An attempt whose confirms ran out is kept receive-only this long.
    package static let receiveOnlyWindow: UInt64 = 11_000
    /// At most this many receive-only attempts are kept (the oldest goes first).
    package static let maxReceiveOnly = 6
    /// A superseded session still opens records this long.
    package static let drainWindow: UInt64 = 1_000
    /// Wait after an authenticated but unparseable message 2 before the next attempt.
    package static let unparseableBackoff: UInt64 = 2_000

    /// The instant an accepted session's attempt stops being kept receive-only: the confirm window, then the
    /// receive-only window, both from the Accept.
    static func receiveOnlyEnd(_ session: AcceptedSession) -> UInt64 {
        session.acceptedAt + confirmWindow + receiveOnlyWindow
    }

    /// Keep-alives go out after a quarter of the liveness timeout without sending.
    static func keepAliveInterval(_ limits: SessionLimits) -> UInt64 { UInt64(limits.livenessTimeout) / 4 }

    /// The age at which the session must be gone.
    static func ageLimit(_ session: AcceptedSession) -> UInt64 {
        session.acceptedAt + UInt64(session.limits.maxSessionAge) * 1_000
    }

    /// The reconnect starts at seven eighths of the maximum age, well before the limit.
    static func ageReconnect(_ session: AcceptedSession) -> UInt64 {
        session.acceptedAt + UInt64(session.limits.maxSessionAge) * 1_000 / 8 * 7
    }

    /// The reconnect starts when a counter reaches seven eighths of the maximum.
    static func counterReconnect(_ maxCounter: UInt64) -> UInt64 { maxCounter / 8 * 7 }
}
