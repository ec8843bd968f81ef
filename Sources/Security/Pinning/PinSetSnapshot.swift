public import FoundationEssentials

/// The pin manager's state at one moment, for inspection and tests (not secret).
public struct PinSetSnapshot: Sendable, Equatable {
    /// Active CA pins.
    public var caPins: Set<SPKIPin>
    /// CA pins replaced by the last rotation.
    public var backupCAPins: Set<SPKIPin>
    /// Backup pins are honoured strictly before this time; nil when there are none.
    public var backupExpiry: Date?
    /// Emergency leaf pins.
    public var emergencyLeafPins: Set<SPKIPin>
    /// Effective date of the newest applied update, or the configuration's issue time.
    public var newestEffectiveDate: Date
}
