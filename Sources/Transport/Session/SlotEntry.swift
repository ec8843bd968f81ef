public import AetherSecurity

/// One entry of a host's slot status: a key of this device and how the host holds it.
public struct SlotEntry: Sendable, Hashable {
    /// How the host holds a key.
    public enum State: UInt8, Sendable, Hashable {
        /// The host opens sessions under it.
        case active = 0x01
        /// Paired, waiting for its first (promote) connect.
        case pending = 0x02
    }

    /// The key.
    public let keyID: KeyID
    /// Its state on the host.
    public let state: State

    /// Wraps an entry.
    public init(keyID: KeyID, state: State) {
        self.keyID = keyID
        self.state = state
    }
}
