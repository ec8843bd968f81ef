import AetherIO
internal import CAetherSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// Every call into SQLite made by AetherReceiver: a small safe wrapper over one connection. Values travel only as
/// bound parameters; errors carry SQLite's message (never a bound value) as `ReceiverError(.storageFailed)`.
///
/// One owner (the catalogue) uses it only while holding its lock, so every call on it is serialized.
// @unchecked Sendable: every use is under the owning catalogue's Mutex (and SQLite is opened FULLMUTEX).
@safe final class SQLiteConnection: @unchecked Sendable {
    /// A value bound to or read from a statement.
    typealias Value = CatalogValue

    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = unsafe [:]
    /// The database's path, for messages.
    let path: String

    /// sqlite3_open_v2 (read-write, create, full mutex), then WAL, `synchronous=FULL`, foreign keys and a busy
    /// timeout.
    /// The path is passed to SQLite as its bytes, so a directory whose name is not UTF-8 works.
    init(path file: FilePath, busyTimeoutMilliseconds: Int32 = 5000) throws(ReceiverError) {
        let path = file.description
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let rc = unsafe file.withCString { unsafe sqlite3_open_v2($0, &opened, flags, nil) }
        guard rc == SQLITE_OK, let opened = unsafe opened else {
            guard let opened = unsafe opened else {
                throw ReceiverError(.storageFailed, "cannot open the catalogue: out of memory")
            }
            let error = unsafe Self.failure("cannot open the catalogue", handle: opened)
            _ = unsafe sqlite3_close_v2(opened)
            throw error
        }
        unsafe handle = opened
        self.path = path
        _ = unsafe sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        let mode = try query("PRAGMA journal_mode=WAL").first?.first
        guard mode == .text("wal") else { throw ReceiverError(.storageFailed, "the catalogue refused WAL mode") }
        try execute("PRAGMA synchronous=FULL")
        try execute("PRAGMA foreign_keys=ON")
    }

    /// sqlite3_finalize of every cached statement, then sqlite3_close_v2.
    deinit {
        unsafe statements.values.forEach { _ = unsafe sqlite3_finalize($0) }
        _ = unsafe sqlite3_close_v2(handle)
    }

    /// Runs `sql` (one statement) with `parameters` bound in order; returns the rows changed.
    @discardableResult
    func execute(_ sql: String, _ parameters: [Value] = []) throws(ReceiverError) -> Int {
        _ = try run(sql, parameters, collect: false)
        return Int(unsafe sqlite3_changes(handle))
    }

    /// Runs `sql` with `parameters` bound in order; returns every row.
    func query(_ sql: String, _ parameters: [Value] = []) throws(ReceiverError) -> [[Value]] {
        try run(sql, parameters, collect: true)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` ... `COMMIT`; any error rolls back. The commit is durable
    /// (`synchronous=FULL`) when this returns.
    func transaction<T>(_ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        try execute("BEGIN IMMEDIATE")
        do throws(ReceiverError) {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// `PRAGMA integrity_check`: true when SQLite answers `ok`.
    func integrityCheck() throws(ReceiverError) -> Bool {
        try query("PRAGMA integrity_check") == [[.text("ok")]]
    }

    // MARK: Statements

    /// sqlite3_prepare_v2 once per SQL text, then sqlite3_reset, sqlite3_bind_*, sqlite3_step and sqlite3_column_*.
    private func run(_ sql: String, _ parameters: [Value], collect: Bool) throws(ReceiverError) -> [[Value]] {
        let statement = try unsafe prepared(sql)
        defer {
            _ = unsafe sqlite3_reset(statement)
            _ = unsafe sqlite3_clear_bindings(statement)
        }
        for (offset, value) in parameters.enumerated() {
            let position = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = unsafe sqlite3_bind_null(statement, position)
            case .integer(let number): rc = unsafe sqlite3_bind_int64(statement, position, number)
            case .text(let text):
                rc = unsafe sqlite3_bind_text(statement, position, text, -1, Self.transient)
            case .blob(let bytes):
                rc = unsafe bytes.withUnsafeBytes { raw in
                    // A zero-length blob is bound as an empty blob, not NULL.
                    unsafe sqlite3_bind_blob64(
                        statement, position, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(raw.count),
                        Self.transient)
                }
            }
            guard rc == SQLITE_OK else { throw failure("bind") }
        }
        var rows: [[Value]] = []
        while true {
            let rc = unsafe sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw failure("step") }
            guard collect else { continue }
            let count = unsafe sqlite3_column_count(statement)
            var row: [Value] = []
            row.reserveCapacity(Int(count))
            for column in 0..<count {
                switch unsafe sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(unsafe sqlite3_column_int64(statement, column)))
                case SQLITE_TEXT:
                    if let text = unsafe sqlite3_column_text(statement, column) {
                        row.append(.text(unsafe String(cString: text)))
                    } else {
                        row.append(.text(""))
                    }
                case SQLITE_BLOB:
                    let length = Int(unsafe sqlite3_column_bytes(statement, column))
                    if length > 0, let base = unsafe sqlite3_column_blob(statement, column) {
                        row.append(.blob(unsafe Array(UnsafeRawBufferPointer(start: base, count: length))))
                    } else {
                        row.append(.blob([]))
                    }
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }

    private func prepared(_ sql: String) throws(ReceiverError) -> OpaquePointer {
        if let cached = unsafe statements[sql] { return unsafe cached }
        var statement: OpaquePointer?
        let rc = unsafe sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement = unsafe statement else { throw failure("prepare") }
        unsafe statements[sql] = statement
        return unsafe statement
    }

    private func failure(_ step: String) -> ReceiverError {
        unsafe Self.failure("catalogue \(step) failed", handle: handle)
    }

    /// `what`, SQLite's message for `handle`'s last failure and, for one of opening or I/O, the system's error.
    private static func failure(_ what: String, handle: OpaquePointer) -> ReceiverError {
        let message = unsafe String(cString: sqlite3_errmsg(handle))
        let code = unsafe systemErrno(handle)
        let cause = code.map { unsafe " (" + String(cString: strerror($0)) + ")" } ?? ""
        return ReceiverError(.storageFailed, "\(what): \(message)\(cause)", errno: code)
    }

    /// The operating system's error behind the last failure, when SQLite's was one of opening or I/O
    /// (`sqlite3_system_errno` keeps its value after other kinds of failure, so it is read only for these).
    private static func systemErrno(_ handle: OpaquePointer) -> Int32? {
        let primary = unsafe sqlite3_extended_errcode(handle) & 0xFF
        guard primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR || primary == SQLITE_FULL else { return nil }
        let code = unsafe sqlite3_system_errno(handle)
        // SQLITE_FULL without a system error is still the disk full (SQLite's own check of the space left).
        if code == 0, primary == SQLITE_FULL { return ENOSPC }
        return code == 0 ? nil : code
    }

    /// SQLITE_TRANSIENT (a macro Swift cannot import): SQLite copies the bound bytes at once.
    private static let transient = unsafe unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

extension SQLiteConnection: CatalogConnection {
    static func placeholder(_ n: Int) -> String { "?\(n)" }
    static let offsetColumn = "offset"
    static func boolean(_ value: Bool) -> CatalogValue { .integer(value ? 1 : 0) }
    static let parityLinkAndRebuilt = "NULL, 0"
}
