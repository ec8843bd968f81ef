/// What the key store keeps for one host: its paired keys (at most `KeyRing.capacity`, ids unique).
public struct KeyStoreItem: Sendable, Equatable, CustomStringConvertible {
    /// The host the item belongs to.
    public let hostID: HostID
    /// The host's keys.
    public let keys: [PairedKey]

    /// Checks that every key belongs to `hostID`, ids are unique and there are at most `KeyRing.capacity`.
    public init(hostID: HostID, keys: [PairedKey]) throws(SecurityError) {
        guard keys.count <= KeyRing.capacity else {
            throw SecurityError(.keyRingFull, "a key store item holds at most \(KeyRing.capacity) keys")
        }
        guard keys.allSatisfy({ $0.hostID == hostID }) else {
            throw SecurityError(.invalidKey, "every key of a key store item belongs to its host")
        }
        guard Set(keys.map(\.id)).count == keys.count else {
            throw SecurityError(.invalidKey, "key ids in a key store item are unique")
        }
        self.init(validatedHostID: hostID, keys: keys)
    }

    /// For callers that already hold the invariants (the key ring, the file parser).
    init(validatedHostID hostID: HostID, keys: [PairedKey]) {
        self.hostID = hostID
        self.keys = keys
    }

    public var description: String { "KeyStoreItem(host: \(hostID), keys: \(keys.count))" }
}
