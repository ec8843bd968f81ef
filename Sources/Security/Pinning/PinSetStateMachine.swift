import FoundationEssentials

/// The pure state of the certificate pin manager: which pins are trusted now, and how a verified update
/// changes them. No I/O, no clock, no locks: the owner passes `now` and holds it in a Mutex.
struct PinSetStateMachine: Sendable {
    /// How long the replaced CA pins stay trusted after a rotation.
    static let backupOverlap: TimeInterval = 72 * 3600

    private(set) var snapshot: PinSetSnapshot

    init(configuration: PinConfiguration) {
        snapshot = PinSetSnapshot(
            caPins: configuration.caPins, backupCAPins: [], backupExpiry: nil,
            emergencyLeafPins: configuration.emergencyLeafPins, newestEffectiveDate: configuration.issuedAt)
    }

    /// The verdict on a chain given as SPKI pins, leaf first: certificates above the leaf against the active and
    /// (inside the overlap window) backup CA pins first, then the leaf against the emergency pins. Nil: reject.
    func evaluate(spkiChain: [SPKIPin], now: Date) -> PinMatch? {
        guard let leaf = spkiChain.first else { return nil }
        let backupLive = snapshot.backupExpiry.map { now < $0 } ?? false
        for pin in spkiChain.dropFirst() {
            if snapshot.caPins.contains(pin) { return .caPin }
            if backupLive, snapshot.backupCAPins.contains(pin) { return .backupCAPin }
        }
        if snapshot.emergencyLeafPins.contains(leaf) { return .emergencyLeafPin }
        return nil
    }

    /// What applying an update did.
    enum UpdateDecision: Equatable {
        case applied
        case rejected(reason: String)
    }

    /// Applies an update whose signature the caller has already verified. Dates are checked here, under the
    /// owner's lock, so that two updates racing cannot both pass the staleness check.
    mutating func apply(_ update: PinUpdatePayload, now: Date) -> UpdateDecision {
        guard update.effectiveDate > snapshot.newestEffectiveDate else {
            return .rejected(reason: "the update is stale: its effective date is not after the current pins'")
        }
        guard now >= update.effectiveDate else { return .rejected(reason: "the update is not yet effective") }
        guard now < update.expiryDate else { return .rejected(reason: "the update has expired") }
        snapshot.backupCAPins = snapshot.caPins
        snapshot.backupExpiry = now.addingTimeInterval(Self.backupOverlap)
        snapshot.caPins = Set(update.newCAPins)
        snapshot.newestEffectiveDate = update.effectiveDate
        return .applied
    }
}
