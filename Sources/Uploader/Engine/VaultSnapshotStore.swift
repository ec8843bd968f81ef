/// The resume manager's `SnapshotStore` over the encrypted `SnapshotVault` of a state directory.
public struct VaultSnapshotStore: SnapshotStore {
    /// The vault.
    public let vault: SnapshotVault
    /// The state directory whose `locks/` guards each upload; nil for a store over a vault alone.
    public let stateDirectory: UploadStateDirectory?

    /// A store over `vault` (its uploads take no lock).
    public init(vault: SnapshotVault) {
        self.vault = vault
        stateDirectory = nil
    }

    /// Opens (creating on first use) the vault of `stateDirectory`; its uploads lock `locks/KEY.lock` there.
    public init(stateDirectory: UploadStateDirectory) throws(UploaderError) {
        vault = try SnapshotVault(stateDirectory: stateDirectory)
        self.stateDirectory = stateDirectory
    }

    /// The exclusive lock of `key` in the state directory (`UploadLock`); `.alreadyRunning` while another holds it.
    public func lock(key: String) throws(UploaderError) -> UploadLock? {
        try stateDirectory.map { directory throws(UploaderError) in try UploadLock(directory: directory, key: key) }
    }

    /// The bytes stored under `key`; a damaged file is `.snapshotDamaged` naming it (left as it is until the resume
    /// manager starts afresh under that key).
    public func load(key: String) throws(UploaderError) -> [UInt8]? {
        switch try vault.load(key: key) {
        case .absent: return nil
        case .damaged(let damage): throw damage.error
        case .snapshot(let bytes): return bytes
        }
    }

    /// Stores `bytes` under `key`; the resume manager saves only after it decided how the upload starts, so a
    /// damaged file it reported before is replaced.
    public func save(_ bytes: [UInt8], key: String) throws(UploaderError) {
        try vault.store(bytes, for: key, replacingDamaged: true)
    }

    public func remove(key: String) throws(UploaderError) {
        try vault.remove(key: key)
    }

    /// The upload keys of the kept snapshots (idempotency journals, which share the vault, are not listed).
    public func keys() throws(UploaderError) -> [String] {
        try vault.list().keys.filter { !$0.hasPrefix(Self.journalPrefix) }
    }

    static let journalPrefix = "idempotency:"

    public func idempotencyJournal(session: String) -> (any IdempotencyJournal)? {
        VaultIdempotencyJournal(vault: vault, session: session)
    }

    public func discardIdempotencyJournal(session: String) {
        // A journal that cannot be removed only costs a file: its keys are never used again.
        _ = try? vault.remove(key: Self.journalPrefix + session)
    }
}
