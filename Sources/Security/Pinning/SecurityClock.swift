public import FoundationEssentials

/// Wall-clock time, injected so that pin rotation windows and challenge expiry are tested with a manual
/// clock instead of sleeps.
public protocol SecurityClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's wall clock.
public struct SystemSecurityClock: SecurityClock {
    /// The system clock.
    public init() {}

    /// `Date()`.
    public func now() -> Date { Date() }
}
