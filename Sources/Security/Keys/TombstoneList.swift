/// Retired key ids and when each was retired (wall milliseconds since the Unix epoch).
///
/// The host keeps its list in `host/tombstones` (it answers these keys with their tombstone); the device keeps
/// one in its key store (`retired`: keys the host proved it retired, written before the item is, so that a
/// retirement holds across a restart even when the item's save failed). Format: `TombstoneFormat`.
public struct TombstoneList: Sendable, Hashable, CustomStringConvertible {
    /// The most entries a list holds (1.5 MiB on disk).
    public static let capacity = 65_536

    /// Retirement instants by key id.
    public private(set) var entries: [KeyID: UInt64] = [:]

    /// An empty list.
    public init() {}

    /// A list of `entries`; more than `capacity` is `.limitExceeded`.
    public init(entries: [KeyID: UInt64]) throws(SecurityError) {
        guard entries.count <= Self.capacity else {
            throw SecurityError(.limitExceeded, "a tombstone list holds at most \(Self.capacity) keys")
        }
        self.entries = entries
    }

    init(validatedEntries: [KeyID: UInt64]) { entries = validatedEntries }

    /// Number of retired keys.
    public var count: Int { entries.count }

    /// The key ids, ascending.
    public var keyIDs: [KeyID] { entries.keys.sorted() }

    /// When `id` was retired; nil when it was not.
    public func retiredAt(_ id: KeyID) -> UInt64? { entries[id] }

    /// Whether `id` is retired.
    public func contains(_ id: KeyID) -> Bool { entries[id] != nil }

    /// Adds `id` (an earlier instant already recorded is kept). Returns false when it was already there;
    /// throws `.limitExceeded` when the list is full.
    @discardableResult
    public mutating func insert(_ id: KeyID, retiredAt: UInt64) throws(SecurityError) -> Bool {
        if let known = entries[id] {
            entries[id] = min(known, retiredAt)
            return false
        }
        guard entries.count < Self.capacity else {
            throw SecurityError(.limitExceeded, "a tombstone list holds at most \(Self.capacity) keys")
        }
        entries[id] = retiredAt
        return true
    }

    public var description: String { "TombstoneList(\(entries.count) keys)" }
}
