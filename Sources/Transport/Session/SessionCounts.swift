/// A host's counters, answered to a counts query (`0x43`).
public struct SessionCounts: Sendable, Hashable {
    /// Records sealed.
    public var sealed: UInt64 = 0
    /// Records opened.
    public var opened: UInt64 = 0
    /// Records that failed authentication.
    public var authenticationFailures: UInt64 = 0
    /// Records rejected by the replay window.
    public var replaysRejected: UInt64 = 0
    /// Authenticated records with an unknown (or unparseable) control type.
    public var unknownControl: UInt64 = 0

    /// All zero.
    public init() {}

    /// Wraps the five counters.
    public init(sealed: UInt64, opened: UInt64, authenticationFailures: UInt64, replaysRejected: UInt64,
        unknownControl: UInt64)
    {
        self.sealed = sealed
        self.opened = opened
        self.authenticationFailures = authenticationFailures
        self.replaysRejected = replaysRejected
        self.unknownControl = unknownControl
    }
}
