/// Which pin tier accepted a chain.
public enum PinMatch: Sendable, Hashable {
    /// An active CA pin matched a certificate above the leaf.
    case caPin
    /// A backup CA pin (the set replaced by the last rotation, within its 72 h overlap) matched.
    case backupCAPin
    /// No CA pin matched, but the leaf's key is an emergency leaf pin.
    case emergencyLeafPin
}
