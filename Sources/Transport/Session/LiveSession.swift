/// The client's live session in `ReconnectStateMachine`: the attempt that made it, and the deadlines it
/// keeps (liveness, keep-alive, age limit, the reconnect before the age limit).
struct LiveSession: Sendable {
    /// The attempt that made the session (the driver's handle on its keys).
    let attemptID: AttemptID
    var session: AcceptedSession

    /// No authenticated record arrived within the host's liveness timeout after this instant.
    var livenessDeadline: UInt64 { session.lastReceivedAt + UInt64(session.limits.livenessTimeout) }

    /// A keep-alive goes out at this instant unless something else is sent first.
    var keepAliveDeadline: UInt64 { session.lastSentAt + ReconnectTimers.keepAliveInterval(session.limits) }

    /// The session must be gone at this instant.
    var ageLimit: UInt64 { ReconnectTimers.ageLimit(session) }

    /// A replacement is asked for at this instant (once).
    var ageReconnect: UInt64 { ReconnectTimers.ageReconnect(session) }

    /// Every instant at which the session has timer work.
    var deadlines: [UInt64] {
        var result = [livenessDeadline, keepAliveDeadline, ageLimit]
        if !session.reconnectRequested { result.append(ageReconnect) }
        return result
    }
}
