/// A superseded session of `ReconnectStateMachine`: it still opens records (and delivers their data) until
/// the drain window ends or the host sends BYE on it.
struct DrainingSession: Sendable {
    /// The attempt that made the session.
    let attemptID: AttemptID
    let session: AcceptedSession
    /// The drain window ends at this monotonic instant.
    let until: UInt64

    /// The session `live` drains from `now` for `ReconnectTimers.drainWindow`.
    init(superseding live: LiveSession, now: UInt64) {
        attemptID = live.attemptID
        session = live.session
        until = now + ReconnectTimers.drainWindow
    }
}
