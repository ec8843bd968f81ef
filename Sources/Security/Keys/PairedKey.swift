/// One paired device key: the PSK (K_dev) a device shares with one host, and what the ring knows about it.
///
/// Prints without the key (`key: <redacted>`).
public struct PairedKey: Sendable, Equatable, CustomStringConvertible {
    /// What the host last said about the key.
    public enum State: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Paired but not yet confirmed, or listed as pending by the host.
        case pending = 1
        /// Listed as active by the host.
        case active = 2
        /// Left out of the host's last listing. Kept: only a tombstone, a refused pairing or Forget deletes a key.
        case unlisted = 3

        public var description: String {
            switch self {
            case .pending: "pending"
            case .active: "active"
            case .unlisted: "unlisted"
            }
        }
    }

    /// The key's public name.
    public let id: KeyID
    /// The secret (K_dev), 256 bits.
    public let key: SymmetricKey
    /// The host the key is paired with.
    public let hostID: HostID
    /// When the key was created on this device.
    public let createdAt: KeyTimestamp
    /// What the host last said about it.
    public var state: State

    /// Wraps a key. Throws `.invalidKey` unless `key` is 256 bits (a Noise PSK).
    public init(id: KeyID, key: SymmetricKey, hostID: HostID, createdAt: KeyTimestamp, state: State)
        throws(SecurityError)
    {
        guard key.bitCount == 256 else { throw SecurityError(.invalidKey, "a device key is 256 bits") }
        self.id = id
        self.key = key
        self.hostID = hostID
        self.createdAt = createdAt
        self.state = state
    }

    /// A fresh random key for pairing with `hostID`, pending until the host confirms it.
    public static func generate(hostID: HostID, now: KeyTimestamp) -> PairedKey {
        PairedKey(
            unchecked: KeyID(), key: SymmetricKey(size: .bits256), hostID: hostID, createdAt: now, state: .pending)
    }

    private init(unchecked id: KeyID, key: SymmetricKey, hostID: HostID, createdAt: KeyTimestamp, state: State) {
        self.id = id
        self.key = key
        self.hostID = hostID
        self.createdAt = createdAt
        self.state = state
    }

    public var description: String {
        "PairedKey(id: \(id), host: \(hostID), created: \(createdAt), state: \(state), key: <redacted>)"
    }
}
