import AetherIO

/// The fleet catalogue: PostgreSQL through libpq, shared by every receiver of a fleet. Versioned migrations run at
/// start (table `schema_migrations`; a schema newer than this code is refused with `.schemaTooNew`), each mutating
/// call is one transaction, and `serialized(_:_:)` holds the upload's row lock (`SELECT ... FOR UPDATE`) for a
/// whole acknowledgement, so two receivers never both take the same chunk or the same offset. A server that went
/// away answers `.unavailable` (503) until it is back; the pool then reconnects.
public final class PostgresCatalog: UploadCatalog {
    /// The schema version this code writes.
    public static let schemaVersion: Int64 = Int64(migrations.count)

    /// How to reach the server and how patient to be.
    public struct Configuration: Sendable {
        /// A libpq connection string: `postgres://USER@HOST:PORT/DB`, `postgresql:///DB?host=/socket/dir` or
        /// `key=value` pairs. The password comes from it, `PGPASSWORD` or `~/.pgpass`, as libpq reads them.
        public var url: String
        /// Connections held at most.
        public var poolSize: Int
        /// `statement_timeout` of every connection (a row lock waited for counts).
        public var statementTimeoutMilliseconds: Int
        /// How long a request waits for a free connection before `.unavailable`.
        public var poolWaitMilliseconds: Int

        /// A configuration; the defaults suit one receiver of a small fleet.
        public init(
            url: String, poolSize: Int = 8, statementTimeoutMilliseconds: Int = 30_000,
            poolWaitMilliseconds: Int = 10_000
        ) {
            self.url = url
            self.poolSize = poolSize
            self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
            self.poolWaitMilliseconds = poolWaitMilliseconds
        }
    }

    private let pool: PostgresPool

    /// The transaction `serialized` holds on this thread, for the catalogue calls its body makes.
    @TaskLocal private static var bound: Binding?

    private struct Binding: Sendable {
        let owner: ObjectIdentifier
        let connection: PostgresConnection
    }

    /// Connects, then applies the migrations this code knows and the database lacks.
    public init(_ configuration: Configuration) throws(ReceiverError) {
        if let problem = PostgresConnection.parseProblem(configuration.url) {
            throw ReceiverError(.malformedRequest, problem)
        }
        pool = PostgresPool(
            conninfo: configuration.url, size: max(configuration.poolSize, 2),
            statementTimeoutMilliseconds: configuration.statementTimeoutMilliseconds,
            waitMilliseconds: configuration.poolWaitMilliseconds)
        try pool.withConnection { connection throws(ReceiverError) in try Self.migrate(connection) }
    }

    /// Connects to `url` with the default configuration.
    public convenience init(url: String) throws(ReceiverError) {
        try self.init(Configuration(url: url))
    }

    // MARK: Migrations

    /// Each entry is one schema version, applied in order in one transaction with its `schema_migrations` row.
    private static let migrations: [[String]] = [
        [
            """
            CREATE TABLE uploads (id TEXT PRIMARY KEY, owner TEXT NOT NULL, protocol TEXT NOT NULL,
              state TEXT NOT NULL, size BIGINT, chunk_size BIGINT NOT NULL, chunks BIGINT NOT NULL,
              chain_session TEXT, content_id TEXT, parity_data BIGINT, parity_count BIGINT,
              metadata BYTEA NOT NULL, expected_sha256 BYTEA, concat TEXT, stream_offset BIGINT NOT NULL,
              chain_verified BIGINT NOT NULL, chain_link BYTEA, created_at BIGINT NOT NULL,
              updated_at BIGINT NOT NULL, failure TEXT)
            """,
            "CREATE INDEX uploads_owner_state ON uploads (owner, state)",
            "CREATE INDEX uploads_state_updated ON uploads (state, updated_at)",
            """
            CREATE TABLE chunks (upload TEXT NOT NULL REFERENCES uploads(id), idx BIGINT NOT NULL,
              length BIGINT NOT NULL, sha256 BYTEA NOT NULL, crc32c BIGINT NOT NULL, link BYTEA,
              rebuilt BOOLEAN NOT NULL, PRIMARY KEY (upload, idx))
            """,
            """
            CREATE TABLE parity (upload TEXT NOT NULL REFERENCES uploads(id), idx BIGINT NOT NULL,
              length BIGINT NOT NULL, sha256 BYTEA NOT NULL, crc32c BIGINT NOT NULL, PRIMARY KEY (upload, idx))
            """,
            """
            CREATE TABLE receipts (upload TEXT PRIMARY KEY REFERENCES uploads(id), chain_head BYTEA NOT NULL,
              chunks BIGINT NOT NULL, cid TEXT NOT NULL, completed_at BIGINT NOT NULL, file_sha256 BYTEA NOT NULL,
              merkle_root BYTEA NOT NULL, size BIGINT NOT NULL)
            """,
            """
            CREATE TABLE objects (content_id TEXT PRIMARY KEY, upload TEXT NOT NULL REFERENCES uploads(id),
              size BIGINT NOT NULL, file_sha256 BYTEA NOT NULL)
            """,
            """
            CREATE TABLE audit (seq BIGSERIAL PRIMARY KEY, upload TEXT, event TEXT NOT NULL, at BIGINT NOT NULL)
            """,
            "CREATE INDEX audit_upload ON audit (upload, seq)",
        ],
        [
            // 2: issued possession challenges, so that any receiver of a fleet can check the answer.
            """
            CREATE TABLE possession (upload TEXT NOT NULL REFERENCES uploads(id), nonce BYTEA NOT NULL,
              challenge BYTEA NOT NULL, issued_at BIGINT NOT NULL, PRIMARY KEY (upload, nonce))
            """,
            "CREATE INDEX possession_issued ON possession (issued_at)",
        ],
        [
            // 3: the dedup index per owner and chunk size (one entry per owner's copy, and the chunk size of the
            // digests the native upload kept, so a create never hashes a stored object).
            "ALTER TABLE objects ADD COLUMN owner TEXT, ADD COLUMN chunk_size BIGINT",
            """
            UPDATE objects SET owner = u.owner,
              chunk_size = CASE WHEN u.protocol = 'native' THEN u.chunk_size ELSE 0 END
            FROM uploads u WHERE u.id = objects.upload
            """,
            "ALTER TABLE objects ALTER COLUMN owner SET NOT NULL, ALTER COLUMN chunk_size SET NOT NULL",
            "ALTER TABLE objects DROP CONSTRAINT objects_pkey",
            "ALTER TABLE objects ADD PRIMARY KEY (owner, content_id, chunk_size)",
            "CREATE INDEX objects_upload ON objects (upload)",
            "CREATE INDEX objects_content ON objects (content_id, chunk_size, upload)",
        ],
    ]

    /// The advisory lock key that keeps two receivers from migrating at once.
    private static let migrationLock: Int64 = 0x6165_7468_6572_6d67

    private static func migrate(_ db: PostgresConnection) throws(ReceiverError) {
        try db.execute("SELECT pg_advisory_lock($1)", [.integer(migrationLock)])
        defer { _ = try? db.execute("SELECT pg_advisory_unlock($1)", [.integer(migrationLock)]) }
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY,
              applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
            """)
        let current: Int64
        switch try db.query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").first?.first {
        case .integer(let version): current = version
        default: throw CatalogRow.damaged("schema_migrations")
        }
        guard current <= schemaVersion else {
            throw ReceiverError(
                .schemaTooNew,
                "the catalogue has schema version \(current), this receiver knows \(schemaVersion): "
                    + "run a receiver at least as new as the one that migrated it")
        }
        guard current < schemaVersion else { return }
        for version in (current + 1)...schemaVersion {
            try db.transaction { () throws(ReceiverError) in
                for statement in migrations[Int(version) - 1] { try db.execute(statement) }
                try db.execute("INSERT INTO schema_migrations (version) VALUES ($1)", [.integer(version)])
            }
        }
    }

    // MARK: Fleet coordination

    public func serialized<T>(_ id: UploadID, _ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        if Self.bound?.owner == ObjectIdentifier(self) { return try body() }
        return try pool.withConnection { db throws(ReceiverError) -> T in
            // What the body's calls recorded commits even when the body then throws (a chunk recorded as breaking
            // the chain, an upload marked failed), as with an embedded catalogue where each call commits; a call
            // that failed was already undone to its savepoint.
            let outcome = try db.transaction { () throws(ReceiverError) -> Result<T, ReceiverError> in
                _ = try db.query("SELECT 1 FROM uploads WHERE id = $1 FOR UPDATE", [.text(id.rawValue)])
                return Self.$bound.withValue(Binding(owner: ObjectIdentifier(self), connection: db)) {
                    do throws(ReceiverError) { return .success(try body()) } catch { return .failure(error) }
                }
            }
            return try outcome.get()
        }
    }

    public func exclusively(_ job: String, _ body: () throws(ReceiverError) -> Void) throws(ReceiverError) -> Bool {
        let key = Self.lockKey(job)
        return try pool.withConnection { db throws(ReceiverError) -> Bool in
            guard case .integer(1) = try db.query("SELECT pg_try_advisory_lock($1)", [.integer(key)]).first?.first
            else { return false }
            defer { _ = try? db.execute("SELECT pg_advisory_unlock($1)", [.integer(key)]) }
            try body()
            return true
        }
    }

    /// A stable 64-bit key for an advisory lock named `job` (FNV-1a of `aether:` and the name).
    static func lockKey(_ job: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "aether:\(job)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    // MARK: UploadCatalog

    public func insert(_ record: UploadRecord) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            try db.execute(
                """
                INSERT INTO uploads (id, owner, protocol, state, size, chunk_size, chunks, chain_session, content_id,
                  parity_data, parity_count, metadata, expected_sha256, concat, stream_offset, chain_verified,
                  chain_link, created_at, updated_at, failure)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
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
                "SELECT COUNT(*) FROM uploads WHERE owner = $1 AND state = 'open'", [.text(owner.name)])
            guard case .integer(let count) = rows.first?.first else { throw CatalogRow.damaged("uploads") }
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
                "SELECT idx, length, sha256, crc32c, NULL::bytea, false FROM parity WHERE upload = $1 ORDER BY idx",
                [.text(id.rawValue)]
            ).map { row throws(ReceiverError) in try CatalogRow.receipt(from: row) }
        }
    }

    public func recordChunks(_ receipts: [ChunkReceipt], upload: UploadRecord) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            for receipt in receipts {
                try db.execute(
                    """
                    INSERT INTO chunks (upload, idx, length, sha256, crc32c, link, rebuilt)
                    VALUES ($1, $2, $3, $4, $5, $6, $7)
                    """,
                    [
                        .text(upload.id.rawValue), .integer(Int64(receipt.index)), .integer(Int64(receipt.length)),
                        .blob(receipt.sha256.bytes), .integer(Int64(receipt.crc32c)),
                        receipt.link.map { .blob($0.bytes) } ?? .null, .text(receipt.rebuilt ? "true" : "false"),
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
                "INSERT INTO parity (upload, idx, length, sha256, crc32c) VALUES ($1, $2, $3, $4, $5)",
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
                INSERT INTO receipts (upload, chain_head, chunks, cid, completed_at, file_sha256, merkle_root, size)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                ON CONFLICT (upload) DO UPDATE SET chain_head = EXCLUDED.chain_head, chunks = EXCLUDED.chunks,
                  cid = EXCLUDED.cid, completed_at = EXCLUDED.completed_at, file_sha256 = EXCLUDED.file_sha256,
                  merkle_root = EXCLUDED.merkle_root, size = EXCLUDED.size
                """,
                [
                    .text(upload.id.rawValue), .blob(receipt.chainHead.bytes), .integer(Int64(receipt.chunks)),
                    .text(receipt.cid), .integer(receipt.completedAt), .blob(receipt.fileSHA256.bytes),
                    .blob(receipt.merkleRoot.bytes), .integer(receipt.size),
                ])
            if let object {
                try CatalogQueries.indexObject(
                    db, object, ignoring: "", conflict: " ON CONFLICT (owner, content_id, chunk_size) DO NOTHING")
            }
            try Self.audit(db, upload.id, "complete", at: receipt.completedAt)
        }
    }

    public func receipt(_ id: UploadID) throws(ReceiverError) -> UploadReceiptRecord? {
        try read { db throws(ReceiverError) in
            let rows = try db.query(
                """
                SELECT chain_head, chunks, cid, completed_at, file_sha256, merkle_root, size FROM receipts
                WHERE upload = $1
                """, [.text(id.rawValue)])
            guard let row = rows.first else { return nil }
            guard row.count == 7, case .integer(let chunks) = row[1], case .text(let cid) = row[2],
                case .integer(let completedAt) = row[3], case .integer(let size) = row[6]
            else { throw CatalogRow.damaged("receipts") }
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

    /// The server answers and holds the schema this code knows.
    public func integrityCheck() throws(ReceiverError) -> Bool {
        try read { db throws(ReceiverError) in
            try db.query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations") == [[.integer(Self.schemaVersion)]]
        }
    }

    // MARK: Rows

    private func read<T>(_ body: (PostgresConnection) throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        if let bound = Self.bound, bound.owner == ObjectIdentifier(self) { return try body(bound.connection) }
        return try pool.withConnection(body)
    }

    private func write(_ body: (PostgresConnection) throws(ReceiverError) -> Void) throws(ReceiverError) {
        if let bound = Self.bound, bound.owner == ObjectIdentifier(self) {
            // Inside `serialized`: the outer transaction commits; a failure undoes only this call.
            try bound.connection.savepoint { () throws(ReceiverError) in try body(bound.connection) }
            return
        }
        try pool.withConnection { db throws(ReceiverError) in
            try db.transaction { () throws(ReceiverError) in try body(db) }
        }
    }

    private static let selectColumns = """
        id, owner, protocol, state, size, chunk_size, chunks, chain_session, content_id, parity_data, parity_count,
        metadata, expected_sha256, concat, stream_offset, chain_verified, chain_link, created_at, updated_at, failure
        """

    private static func columns(_ record: UploadRecord) -> [PostgresConnection.Value] {
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

    private static func updateRow(_ db: PostgresConnection, _ record: UploadRecord) throws(ReceiverError) {
        let values = columns(record)
        let changed = try db.execute(
            """
            UPDATE uploads SET owner = $2, protocol = $3, state = $4, size = $5, chunk_size = $6, chunks = $7,
              chain_session = $8, content_id = $9, parity_data = $10, parity_count = $11, metadata = $12,
              expected_sha256 = $13, concat = $14, stream_offset = $15, chain_verified = $16, chain_link = $17,
              created_at = $18, updated_at = $19, failure = $20
            WHERE id = $1
            """, values)
        guard changed == 1 else { throw ReceiverError(.notFound, "no upload has this id") }
    }

    private static func audit(_ db: PostgresConnection, _ id: UploadID, _ event: String, at: Int64)
        throws(ReceiverError)
    {
        try db.execute(
            "INSERT INTO audit (upload, event, at) VALUES ($1, $2, $3)",
            [.text(id.rawValue), .text(event), .integer(at)])
    }
}
