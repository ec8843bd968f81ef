import AetherSecurity

/// What the application currently wants from `ReconnectStateMachine`: a session under one key. Every new
/// intent gets the next generation; only an attempt of the current generation can become the live session.
struct ReconnectIntent: Sendable {
    let generation: UInt64
    let keyID: KeyID
    /// The ring holds the key as pending, so the hello asks the host to promote it.
    let pending: Bool
    /// A session of this intent is live.
    var satisfied: Bool
    /// No further attempts (PairAgain, clock rejected twice).
    var suspended = false
    var clockRetryUsed = false
    /// Next attempt not before this instant (SessionBusy, unparseable answer).
    var retryAt: UInt64?
}
