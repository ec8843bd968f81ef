public import AetherIO
import Synchronization

/// The embedded catalogue: SQLite in WAL mode with `synchronous=FULL`, one connection used under a lock (every
/// call is serialized; each mutating call is one `BEGIN IMMEDIATE` transaction). The schema is versioned with
/// `PRAGMA user_version`.
public final class SQLiteUploadCatalog: UploadCatalog {
    /// The schema version this code writes.
    public static let schemaVersion: Int64 = 3

    private let connection: SQLiteConnection
    private let lock = Mutex(())

    /// Opens (creating when missing) the catalogue at `path`.
    public init(path: FilePath) throws(ReceiverError) {
        let opened = try SQLiteConnection(path: path)
        try Self.migrate(opened)
        connection = opened
    }

    private static func migrate(_ db: SQLiteConnection) throws(ReceiverError) {
        guard case .integer(let version) = try db.query("PRAGMA user_version").first?.first else {
            throw ReceiverError(.storageFailed, "the catalogue has no user_version")
        }
        if version == schemaVersion { return }
        guard (0..<schemaVersion).contains(version) else {
            throw ReceiverError(
                .storageFailed, "the catalogue has schema version \(version), this receiver knows \(schemaVersion)")
        }
        try db.transaction { () throws(ReceiverError) in
            if version < 1 { try createVersionOne(db) }
            if version < 2 {
                // 2: issued possession challenges (kept here too, so both catalogues behave alike).
                try db.execute(
                    """
                    CREATE TABLE possession (upload TEXT NOT NULL REFERENCES uploads(id), nonce BLOB NOT NULL,
                      challenge BLOB NOT NULL, issued_at INTEGER NOT NULL, PRIMARY KEY (upload, nonce)) WITHOUT ROWID
                    """)
                try db.execute("CREATE INDEX possession_issued ON possession (issued_at)")
            }
            if version < 3 {
                // 3: the dedup index per owner and chunk size (one entry per owner's copy, and the chunk size of
                // the digests the native upload kept, so a create never hashes a stored object).
                try db.execute(
                    """
                    CREATE TABLE objects_v3 (owner TEXT NOT NULL, content_id TEXT NOT NULL, chunk_size INTEGER NOT NULL,
                      upload TEXT NOT NULL REFERENCES uploads(id), size INTEGER NOT NULL, file_sha256 BLOB NOT NULL,
                      PRIMARY KEY (owner, content_id, chunk_size)) WITHOUT ROWID
                    """)
                try db.execute(
                    """
                    INSERT INTO objects_v3 (owner, content_id, chunk_size, upload, size, file_sha256)
                      SELECT u.owner, o.content_id, CASE WHEN u.protocol = 'native' THEN u.chunk_size ELSE 0 END,
                        o.upload, o.size, o.file_sha256 FROM objects o JOIN uploads u ON u.id = o.upload
                    """)
                try db.execute("DROP TABLE objects")
                try db.execute("ALTER TABLE objects_v3 RENAME TO objects")
                try db.execute("CREATE INDEX objects_upload ON objects (upload)")
                try db.execute("CREATE INDEX objects_content ON objects (content_id, chunk_size, upload)")
            }
            try db.execute("PRAGMA user_version = \(schemaVersion)")
        }
    }

    /// The tables of schema version 1.
    private static func createVersionOne(_ db: SQLiteConnection) throws(ReceiverError) {
        do {
            try db.execute(
                """
                CREATE TABLE uploads (id TEXT PRIMARY KEY, owner TEXT NOT NULL, protocol TEXT NOT NULL,
                  state TEXT NOT NULL, size INTEGER, chunk_size INTEGER NOT NULL, chunks INTEGER NOT NULL,
                  chain_session TEXT, content_id TEXT, parity_data INTEGER, parity_count INTEGER,
                  metadata BLOB NOT NULL, expected_sha256 BLOB, concat TEXT, offset INTEGER NOT NULL,
                  chain_verified INTEGER NOT NULL, chain_link BLOB, created_at INTEGER NOT NULL,
                  updated_at INTEGER NOT NULL, failure TEXT)
                """)
            try db.execute("CREATE INDEX uploads_owner_state ON uploads (owner, state)")
            try db.execute("CREATE INDEX uploads_state_updated ON uploads (state, updated_at)")
            try db.execute(
                """
                CREATE TABLE chunks (upload TEXT NOT NULL REFERENCES uploads(id), idx INTEGER NOT NULL,
                  length INTEGER NOT NULL, sha256 BLOB NOT NULL, crc32c INTEGER NOT NULL, link BLOB,
                  rebuilt INTEGER NOT NULL, PRIMARY KEY (upload, idx)) WITHOUT ROWID
                """)
            try db.execute(
                """
                CREATE TABLE parity (upload TEXT NOT NULL REFERENCES uploads(id), idx INTEGER NOT NULL,
                  length INTEGER NOT NULL, sha256 BLOB NOT NULL, crc32c INTEGER NOT NULL,
                  PRIMARY KEY (upload, idx)) WITHOUT ROWID
                """)
            try db.execute(
                """
                CREATE TABLE receipts (upload TEXT PRIMARY KEY REFERENCES uploads(id), chain_head BLOB NOT NULL,
                  chunks INTEGER NOT NULL, cid TEXT NOT NULL, completed_at INTEGER NOT NULL,
                  file_sha256 BLOB NOT NULL, merkle_root BLOB NOT NULL, size INTEGER NOT NULL)
                """)
            try db.execute(
                """
                CREATE TABLE objects (content_id TEXT PRIMARY KEY, upload TEXT NOT NULL REFERENCES uploads(id),
                  size INTEGER NOT NULL, file_sha256 BLOB NOT NULL)
                """)
            try db.execute(
                """
                CREATE TABLE audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, upload TEXT, event TEXT NOT NULL,
                  at INTEGER NOT NULL)
                """)
            try db.execute("CREATE INDEX audit_upload ON audit (upload, seq)")
        }
    }

    // MARK: UploadCatalog

    public func insert(_ record: UploadRecord) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            try db.execute(
                """
                INSERT INTO uploads (id, owner, protocol, state, size, chunk_size, chunks, chain_session, content_id,
                  parity_data, parity_count, metadata, expected_sha256, concat, offset, chain_verified, chain_link,
                  created_at, updated_at, failure)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, Self.columns(record))
            try Self.audit(db, record.id, "created \(record.uploadProtocol.rawValue)", at: record.createdAt)
        }
    }

    public func record(_ id: UploadID) throws(ReceiverError) -> UploadRecord? {
        try read { db throws(ReceiverError) in try CatalogQueries.record(db, id, columns: Self.selectColumns) }
    }

    public func update(_ record: UploadRecord, event: String) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            try Self.updateRow(db, record)
            try Self.audit(db, record.id, event, at: record.updatedAt)
        }
    }

    public func openUploadCount(owner: ClientIdentity) throws(ReceiverError) -> Int {
        try read { db throws(ReceiverError) in
            let rows = try db.query(
                "SELECT COUNT(*) FROM uploads WHERE owner = ? AND state = 'open'", [.text(owner.name)])
            guard case .integer(let count) = rows.first?.first else { return 0 }
            return Int(count)
        }
    }

    public func chunkReceipts(_ id: UploadID) throws(ReceiverError) -> [ChunkReceipt] {
        try read { db throws(ReceiverError) in try CatalogQueries.chunkReceipts(db, id) }
    }

    public func chunkReceipt(_ id: UploadID, index: Int) throws(ReceiverError) -> ChunkReceipt? {
        try read { db throws(ReceiverError) in try CatalogQueries.chunkReceipts(db, id, index: index).first }
    }

    public func parityReceipts(_ id: UploadID) throws(ReceiverError) -> [ChunkReceipt] {
        try read { db throws(ReceiverError) in
            try db.query(
                "SELECT idx, length, sha256, crc32c, NULL, 0 FROM parity WHERE upload = ? ORDER BY idx",
                [.text(id.rawValue)]
            ).map { row throws(ReceiverError) in try CatalogRow.receipt(from: row) }
        }
    }

    public func recordChunks(_ receipts: [ChunkReceipt], upload: UploadRecord) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            for receipt in receipts {
                try db.execute(
                    "INSERT INTO chunks (upload, idx, length, sha256, crc32c, link, rebuilt) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        .text(upload.id.rawValue), .integer(Int64(receipt.index)), .integer(Int64(receipt.length)),
                        .blob(receipt.sha256.bytes), .integer(Int64(receipt.crc32c)),
                        receipt.link.map { .blob($0.bytes) } ?? .null, .integer(receipt.rebuilt ? 1 : 0),
                    ])
                let event = receipt.rebuilt ? "rebuilt chunk \(receipt.index)" : "chunk \(receipt.index)"
                try Self.audit(db, upload.id, event, at: upload.updatedAt)
            }
            try Self.updateRow(db, upload)
        }
    }

    public func recordParity(_ receipt: ChunkReceipt, upload: UploadRecord) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            try db.execute(
                "INSERT INTO parity (upload, idx, length, sha256, crc32c) VALUES (?, ?, ?, ?, ?)",
                [
                    .text(upload.id.rawValue), .integer(Int64(receipt.index)), .integer(Int64(receipt.length)),
                    .blob(receipt.sha256.bytes), .integer(Int64(receipt.crc32c)),
                ])
            try Self.updateRow(db, upload)
            try Self.audit(db, upload.id, "parity \(receipt.index)", at: upload.updatedAt)
        }
    }

    public func recordCompletion(_ upload: UploadRecord, receipt: UploadReceiptRecord, object: StoredObject?)
        throws(ReceiverError)
    {
        try write { db throws(ReceiverError) in
            try Self.updateRow(db, upload)
            try db.execute(
                """
                INSERT OR REPLACE INTO receipts (upload, chain_head, chunks, cid, completed_at, file_sha256,
                  merkle_root, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(upload.id.rawValue), .blob(receipt.chainHead.bytes), .integer(Int64(receipt.chunks)),
                    .text(receipt.cid), .integer(receipt.completedAt), .blob(receipt.fileSHA256.bytes),
                    .blob(receipt.merkleRoot.bytes), .integer(receipt.size),
                ])
            if let object { try CatalogQueries.indexObject(db, object, ignoring: "OR IGNORE", conflict: "") }
            try Self.audit(db, upload.id, "complete", at: receipt.completedAt)
        }
    }

    public func receipt(_ id: UploadID) throws(ReceiverError) -> UploadReceiptRecord? {
        try read { db throws(ReceiverError) in
            let rows = try db.query(
                """
                SELECT chain_head, chunks, cid, completed_at, file_sha256, merkle_root, size FROM receipts
                WHERE upload = ?
                """, [.text(id.rawValue)])
            guard let row = rows.first, row.count == 7, case .integer(let chunks) = row[1],
                case .text(let cid) = row[2],
                case .integer(let completedAt) = row[3], case .integer(let size) = row[6]
            else { return nil }
            return UploadReceiptRecord(
                chainHead: try CatalogRow.digest(row[0]), chunks: Int(chunks), cid: cid, completedAt: completedAt,
                fileSHA256: try CatalogRow.digest(row[4]), id: id, merkleRoot: try CatalogRow.digest(row[5]), size: size
            )
        }
    }

    public func object(contentID: String, chunkSize: Int, owner: ClientIdentity?) throws(ReceiverError)
        -> StoredObject?
    {
        try read { db throws(ReceiverError) in
            try CatalogQueries.object(db, contentID: contentID, chunkSize: chunkSize, owner: owner)
        }
    }

    public func recordRemoval(_ upload: UploadRecord, event: String) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            try CatalogQueries.deleteWorkingRows(db, upload.id)
            try Self.updateRow(db, upload)
            try Self.audit(db, upload.id, event, at: upload.updatedAt)
        }
    }

    public func uploads(in states: Set<UploadState>) throws(ReceiverError) -> [UploadRecord] {
        try read { db throws(ReceiverError) in try CatalogQueries.uploads(db, in: states, columns: Self.selectColumns) }
    }

    public func idleUploads(before wallSeconds: Int64) throws(ReceiverError) -> [UploadID] {
        try read { db throws(ReceiverError) in try CatalogQueries.idleUploads(db, before: wallSeconds) }
    }

    public func auditLog(_ id: UploadID) throws(ReceiverError) -> [AuditEntry] {
        try read { db throws(ReceiverError) in try CatalogQueries.auditLog(db, id) }
    }

    public func recordPossessionChallenge(
        _ id: UploadID, nonce: [UInt8], challenge: [UInt8], issuedAt: Int64, expiredBefore: Int64
    ) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            try CatalogQueries.recordPossession(
                db, id, nonce: nonce, challenge: challenge, issuedAt: issuedAt, expiredBefore: expiredBefore)
        }
    }

    public func takePossessionChallenge(_ id: UploadID, nonce: [UInt8]) throws(ReceiverError) -> [UInt8]? {
        try read { db throws(ReceiverError) in try CatalogQueries.takePossession(db, id, nonce: nonce) }
    }

    public func integrityCheck() throws(ReceiverError) -> Bool {
        try read { db throws(ReceiverError) in try db.integrityCheck() }
    }

    // MARK: Rows

    private func read<T>(_ body: (SQLiteConnection) throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        try lock.withLock { _ throws(ReceiverError) -> T in try body(connection) }
    }

    private func write(_ body: (SQLiteConnection) throws(ReceiverError) -> Void) throws(ReceiverError) {
        try lock.withLock { _ throws(ReceiverError) in
            try connection.transaction { () throws(ReceiverError) in try body(connection) }
        }
    }

    private static let selectColumns = """
        id, owner, protocol, state, size, chunk_size, chunks, chain_session, content_id, parity_data, parity_count,
        metadata, expected_sha256, concat, offset, chain_verified, chain_link, created_at, updated_at, failure
        """

    private static func columns(_ record: UploadRecord) -> [SQLiteConnection.Value] {
        [
            .text(record.id.rawValue), .text(record.owner.name), .text(record.uploadProtocol.rawValue),
            .text(record.state.rawValue), record.size.map { .integer($0) } ?? .null,
            .integer(Int64(record.chunkSize)), .integer(Int64(record.chunks)),
            record.chainSessionID.map { .text($0) } ?? .null, record.contentID.map { .text($0) } ?? .null,
            record.parity.map { .integer(Int64($0.data)) } ?? .null,
            record.parity.map { .integer(Int64($0.parity)) } ?? .null, .blob(MetadataCoding.encode(record.metadata)),
            record.expectedSHA256.map { .blob($0.bytes) } ?? .null,
            record.concatenation.map { .text(CatalogRow.concatText($0)) } ?? .null, .integer(record.offset),
            .integer(Int64(record.chainVerifiedThrough)), record.chainLink.map { .blob($0.bytes) } ?? .null,
            .integer(record.createdAt), .integer(record.updatedAt), record.failure.map { .text($0) } ?? .null,
        ]
    }

    private static func updateRow(_ db: SQLiteConnection, _ record: UploadRecord) throws(ReceiverError) {
        let values = columns(record)
        let changed = try db.execute(
            """
            UPDATE uploads SET owner = ?, protocol = ?, state = ?, size = ?, chunk_size = ?, chunks = ?,
              chain_session = ?, content_id = ?, parity_data = ?, parity_count = ?, metadata = ?, expected_sha256 = ?,
              concat = ?, offset = ?, chain_verified = ?, chain_link = ?, created_at = ?, updated_at = ?, failure = ?
            WHERE id = ?
            """, Array(values.dropFirst()) + [values[0]])
        guard changed == 1 else { throw ReceiverError(.notFound, "no upload has this id") }
    }

    private static func audit(_ db: SQLiteConnection, _ id: UploadID, _ event: String, at: Int64) throws(ReceiverError)
    {
        try db.execute(
            "INSERT INTO audit (upload, event, at) VALUES (?, ?, ?)", [.text(id.rawValue), .text(event), .integer(at)])
    }
}

/// Metadata as one blob: for each key in sorted order, `u32 key length || key || u32 value length || value`
/// (big-endian lengths).
enum MetadataCoding {
    static func encode(_ metadata: [String: [UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for key in metadata.keys.sorted() {
            let keyBytes = Array(key.utf8)
            let value = metadata[key] ?? []
            append(UInt32(keyBytes.count), to: &out)
            out += keyBytes
            append(UInt32(value.count), to: &out)
            out += value
        }
        return out
    }

    static func decode(_ bytes: [UInt8]) throws(ReceiverError) -> [String: [UInt8]] {
        var metadata: [String: [UInt8]] = [:]
        var position = 0
        func take() throws(ReceiverError) -> [UInt8] {
            guard bytes.count - position >= 4 else { throw ReceiverError(.storageFailed, "damaged metadata") }
            let length = bytes[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
            position += 4
            guard bytes.count - position >= length else { throw ReceiverError(.storageFailed, "damaged metadata") }
            defer { position += length }
            return Array(bytes[position..<position + length])
        }
        while position < bytes.count {
            let key = String(decoding: try take(), as: UTF8.self)
            metadata[key] = try take()
        }
        return metadata
    }

    private static func append(_ value: UInt32, to out: inout [UInt8]) {
        out += [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }
}
