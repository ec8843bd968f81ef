/// Where a `ChunkIdempotencyManager` keeps the little it must remember across runs (see its documentation):
/// opaque bytes, read once when the manager starts and replaced whole, atomically, before a new attempt
/// number is used.
public protocol IdempotencyJournal: Sendable {
    /// The stored bytes, nil when nothing was stored; a damaged record throws (`.snapshotDamaged`).
    func load() throws(UploaderError) -> [UInt8]?
    /// Replaces the stored bytes atomically.
    func save(_ bytes: [UInt8]) throws(UploaderError)
}

/// An `IdempotencyJournal` in the `SnapshotVault`, under the upload key `idempotency:` + session: encrypted and
/// authenticated like a snapshot, written atomically, a damaged one reported naming its file.
public struct VaultIdempotencyJournal: IdempotencyJournal {
    /// The vault.
    public let vault: SnapshotVault
    /// The vault key of this session's journal.
    public let key: String

    /// The journal of `session` in `vault`.
    public init(vault: SnapshotVault, session: String) {
        self.vault = vault
        self.key = "idempotency:" + session
    }

    public func load() throws(UploaderError) -> [UInt8]? {
        switch try vault.load(key: key) {
        case .absent: return nil
        case .damaged(let damage): throw damage.error
        case .snapshot(let bytes): return bytes
        }
    }

    public func save(_ bytes: [UInt8]) throws(UploaderError) {
        try vault.store(bytes, for: key)
    }
}
