public import FoundationEssentials

/// The pins a build ships with (upload-engine v2.2 section 8): CA pins (SHA-256 of intermediate CA SPKIs),
/// emergency leaf pins, and the time they were issued (an update must be newer than this).
public struct PinConfiguration: Sendable, Equatable {
    /// Tier 1: pins of intermediate (or root) CA keys.
    public var caPins: Set<SPKIPin>
    /// Tier 3: leaf key pins, honoured only when no CA pin matches.
    public var emergencyLeafPins: Set<SPKIPin>
    /// When these pins were issued; an update whose effective date is not later is stale.
    public var issuedAt: Date

    /// A configuration. At least one CA pin is required (an empty set would reject every server).
    public init(caPins: Set<SPKIPin>, emergencyLeafPins: Set<SPKIPin> = [], issuedAt: Date) throws(SecurityError) {
        guard !caPins.isEmpty else { throw SecurityError(.invalidKey, "a pin configuration needs at least one CA pin") }
        self.caPins = caPins
        self.emergencyLeafPins = emergencyLeafPins
        self.issuedAt = issuedAt
    }
}
