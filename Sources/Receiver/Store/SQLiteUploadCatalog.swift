public import AetherIO
import Synchronization

/// The embedded catalogue: SQLite in WAL mode with `synchronous=FULL`, one connection used under a lock (every
/// call is serialized; each mutating call is one `BEGIN IMMEDIATE` transaction). The schema is versioned with
/// `PRAGMA user_version`.
public final class SQLiteUploadCatalog: SQLCatalog {
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

    public func integrityCheck() throws(ReceiverError) -> Bool {
        try read { db throws(ReceiverError) in try db.integrityCheck() }
    }

    // MARK: Connection

    func read<T>(_ body: (SQLiteConnection) throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        try lock.withLock { _ throws(ReceiverError) -> T in try body(connection) }
    }

    func write(_ body: (SQLiteConnection) throws(ReceiverError) -> Void) throws(ReceiverError) {
        try lock.withLock { _ throws(ReceiverError) in
            try connection.transaction { () throws(ReceiverError) in try body(connection) }
        }
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
