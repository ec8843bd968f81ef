/// Persistent storage of paired keys: one item per host id.
///
/// Each save replaces the host's item in one atomic step (a reader sees the old or the new item,
/// never a mix). A damaged item is reported with `.keyStoreDamaged` and is never overwritten or
/// deleted by `save` or `delete`: the user repairs or removes it.
public protocol KeyStore: Sendable {
    /// The host's item, or nil when there is none. Throws `.keyStoreDamaged` for a damaged item.
    func load(hostID: HostID) throws(SecurityError) -> KeyStoreItem?
    /// Replaces the host's item atomically. Throws `.keyStoreDamaged`, writing nothing, when the
    /// item on disk is damaged.
    func save(_ item: KeyStoreItem) throws(SecurityError)
    /// Deletes the host's item; nothing happens when there is none. A damaged item is not deleted.
    func delete(hostID: HostID) throws(SecurityError)
    /// Every host id with an item (damaged ones included), in order.
    func hostIDs() throws(SecurityError) -> [HostID]
    /// Keys retired by an authenticated tombstone (markers written before the item's save, so a
    /// retirement holds across a restart even when that save failed). A damaged list throws
    /// `.keyStoreDamaged`: the store cannot prove which keys are retired.
    func retiredKeys() throws(SecurityError) -> TombstoneList
    /// Records that `id` was retired, in one atomic write.
    func markRetired(_ id: KeyID, at instant: KeyTimestamp) throws(SecurityError)
}
