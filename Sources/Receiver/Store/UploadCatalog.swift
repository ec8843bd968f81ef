public import AetherIO

/// Where the receiver keeps what it knows about uploads: sessions, offsets, chunk and parity receipts, receipts of
/// completed uploads, the dedup index by content id and an audit log. No SQL crosses this protocol, so a
/// PostgreSQL catalogue can implement it without touching the engine.
///
/// Every mutating call is one transaction, durable when it returns, and appends an audit entry in the same
/// transaction.
public protocol UploadCatalog: Sendable {
    /// Records a new upload.
    func insert(_ record: UploadRecord) throws(ReceiverError)
    /// The upload `id`, nil when unknown.
    func record(_ id: UploadID) throws(ReceiverError) -> UploadRecord?
    /// Replaces the stored fields of `record` (state, offset, size, chain progress, times, failure); `event` names
    /// the change in the audit log.
    func update(_ record: UploadRecord, event: String) throws(ReceiverError)
    /// Open uploads of `owner`.
    func openUploadCount(owner: ClientIdentity) throws(ReceiverError) -> Int
    /// The chunk receipts of `id`, by index.
    func chunkReceipts(_ id: UploadID) throws(ReceiverError) -> [ChunkReceipt]
    /// The receipt of chunk `index` of `id`, nil when not stored.
    func chunkReceipt(_ id: UploadID, index: Int) throws(ReceiverError) -> ChunkReceipt?
    /// The parity receipts of `id` (index `group * parity + shard`), by index.
    func parityReceipts(_ id: UploadID) throws(ReceiverError) -> [ChunkReceipt]
    /// Records chunk receipts and the upload's new fields together.
    func recordChunks(_ receipts: [ChunkReceipt], upload: UploadRecord) throws(ReceiverError)
    /// Records a parity receipt and the upload's new fields together.
    func recordParity(_ receipt: ChunkReceipt, upload: UploadRecord) throws(ReceiverError)
    /// Marks `upload` complete with `receipt`, and (when given) enters its object in the dedup index.
    func recordCompletion(_ upload: UploadRecord, receipt: UploadReceiptRecord, object: StoredObject?)
        throws(ReceiverError)
    /// The receipt of a completed upload.
    func receipt(_ id: UploadID) throws(ReceiverError) -> UploadReceiptRecord?
    /// A stored object with content id `contentID` whose chunk hashes at `chunkSize` are kept (the dedup index:
    /// a native upload's receipts), held by `owner`, or by anyone when `owner` is nil; nil when none.
    func object(contentID: String, chunkSize: Int, owner: ClientIdentity?) throws(ReceiverError) -> StoredObject?
    /// Records `upload` (now expired or cancelled) and drops its chunk and parity receipts and any dedup index
    /// entry that points at its object.
    func recordRemoval(_ upload: UploadRecord, event: String) throws(ReceiverError)
    /// Uploads in one of `states`.
    func uploads(in states: Set<UploadState>) throws(ReceiverError) -> [UploadRecord]
    /// Open uploads not changed since `wallSeconds`.
    func idleUploads(before wallSeconds: Int64) throws(ReceiverError) -> [UploadID]
    /// The audit log of `id`, oldest first.
    func auditLog(_ id: UploadID) throws(ReceiverError) -> [AuditEntry]
    /// Keeps an issued possession challenge of `id` (serialized with the verifier's key: secret) under its nonce,
    /// for whichever receiver the answer reaches; forgets those issued before `expiredBefore` (wall ms).
    func recordPossessionChallenge(
        _ id: UploadID, nonce: [UInt8], challenge: [UInt8], issuedAt: Int64, expiredBefore: Int64
    ) throws(ReceiverError)
    /// Removes and returns the challenge of `id` with `nonce` (single use across receivers); nil when none.
    func takePossessionChallenge(_ id: UploadID, nonce: [UInt8]) throws(ReceiverError) -> [UInt8]?
    /// The backing store's own consistency check (`PRAGMA integrity_check` for SQLite).
    func integrityCheck() throws(ReceiverError) -> Bool
    /// Runs `body` (every catalogue call it makes on this thread) with upload `id` locked against every other
    /// receiver sharing the catalogue, as one transaction. The embedded default just runs `body`.
    func serialized<T>(_ id: UploadID, _ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T
    /// Runs `body` unless another receiver sharing the catalogue runs the job `job` now; false when it did not run.
    func exclusively(_ job: String, _ body: () throws(ReceiverError) -> Void) throws(ReceiverError) -> Bool
}

/// An object in the dedup index: its content id, the client that stored it, the chunk size its kept digests are
/// at (the chunk receipts and Merkle root of the native upload that stored it; 0 for a byte-stream upload, which
/// keeps none), and the upload whose object blob holds the bytes.
public struct StoredObject: Sendable, Hashable {
    /// `aci:1:sha256:<hex>`.
    public var contentID: String
    /// The client whose upload stored it.
    public var owner: ClientIdentity
    /// The chunk size of the kept chunk hashes and Merkle root; 0 when none are kept.
    public var chunkSize: Int
    /// The upload whose `.object` blob holds the bytes.
    public var upload: UploadID
    /// Size in bytes.
    public var size: Int64
    /// SHA-256 of the whole object.
    public var fileSHA256: Digest32

    /// An index entry.
    public init(
        contentID: String, owner: ClientIdentity, chunkSize: Int, upload: UploadID, size: Int64, fileSHA256: Digest32
    ) {
        self.contentID = contentID
        self.owner = owner
        self.chunkSize = chunkSize
        self.upload = upload
        self.size = size
        self.fileSHA256 = fileSHA256
    }
}

/// One audit log entry.
public struct AuditEntry: Sendable, Hashable {
    /// What happened (`created`, `chunk 3`, `complete`, ...).
    public var event: String
    /// Wall seconds (Unix).
    public var at: Int64

    /// An entry.
    public init(event: String, at: Int64) {
        self.event = event
        self.at = at
    }
}
