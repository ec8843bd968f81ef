import AetherIO

/// The fleet catalogue: PostgreSQL through libpq, shared by every receiver of a fleet. Versioned migrations run at
/// start (table `schema_migrations`; a schema newer than this code is refused with `.schemaTooNew`), each mutating
/// call is one transaction, and `serialized(_:_:)` holds the upload's row lock (`SELECT ... FOR UPDATE`) for a
/// whole acknowledgement, so two receivers never both take the same chunk or the same offset. A server that went
/// away answers `.unavailable` (503) until it is back; the pool then reconnects.
public final class PostgresCatalog: SQLCatalog {
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

    /// The server answers and holds the schema this code knows.
    public func integrityCheck() throws(ReceiverError) -> Bool {
        try read { db throws(ReceiverError) in
            try db.query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations") == [[.integer(Self.schemaVersion)]]
        }
    }

    // MARK: Rows

    func read<T>(_ body: (PostgresConnection) throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        if let bound = Self.bound, bound.owner == ObjectIdentifier(self) { return try body(bound.connection) }
        return try pool.withConnection(body)
    }

    func write(_ body: (PostgresConnection) throws(ReceiverError) -> Void) throws(ReceiverError) {
        if let bound = Self.bound, bound.owner == ObjectIdentifier(self) {
            // Inside `serialized`: the outer transaction commits; a failure undoes only this call.
            try bound.connection.savepoint { () throws(ReceiverError) in try body(bound.connection) }
            return
        }
        try pool.withConnection { db throws(ReceiverError) in
            try db.transaction { () throws(ReceiverError) in try body(db) }
        }
    }
}
