/// Where resume snapshots live, as opaque bytes per key. The bytes are the serialised `ResumeSnapshot`; the store
/// protects them (a checksum here, encryption in the key-store backed vault) and reports damage as
/// `.snapshotDamaged` without ever returning altered bytes.
public protocol SnapshotStore: Sendable {
    /// The bytes stored under `key`, nil when there are none; damaged bytes throw `.snapshotDamaged`.
    func load(key: String) throws(UploaderError) -> [UInt8]?
    /// Replaces what is stored under `key` atomically.
    func save(_ bytes: [UInt8], key: String) throws(UploaderError)
    /// Removes what is stored under `key` (nothing stored is not an error).
    func remove(key: String) throws(UploaderError)
    /// Every key stored.
    func keys() throws(UploaderError) -> [String]
    /// The lock that keeps every other uploader, in this process or another, off upload `key` while it is held
    /// (`.alreadyRunning` once `UploadLock.releaseWait` has passed); nil where the store has no place for locks.
    func lock(key: String) throws(UploaderError) -> UploadLock?
}

extension SnapshotStore {
    /// Where the idempotency manager of `session` keeps its attempt watermark; nil keeps it for one run only.
    public func idempotencyJournal(session: String) -> (any IdempotencyJournal)? { nil }

    /// Forgets the journal of a finished session.
    public func discardIdempotencyJournal(session: String) {}

    /// No lock: an upload through a store without a place for locks (a test's memory store) is not guarded.
    public func lock(key: String) throws(UploaderError) -> UploadLock? { nil }
}
