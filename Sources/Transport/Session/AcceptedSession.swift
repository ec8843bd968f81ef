import AetherSecurity

/// A session the host accepted for one of the client's attempts, as `ReconnectStateMachine` tracks it while
/// the attempt confirms it, while it is live and while it drains. Times are monotonic milliseconds.
struct AcceptedSession: Sendable {
    let sessionID: UInt64
    let keyID: KeyID
    let limits: SessionLimits
    let hostName: String
    let acceptedAt: UInt64
    var lastReceivedAt: UInt64
    var lastSentAt: UInt64
    /// A replacement was asked for (age or counter near its limit, or a network change): asked once.
    var reconnectRequested = false
}
