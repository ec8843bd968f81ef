internal import CAetherPQ

/// Every call into libpq made by AetherReceiver: one connection, statements with bound parameters only
/// (`PQexecParams`), results read as text (bytea in its hex form). Errors carry the server's message and SQLSTATE,
/// never a bound value or the connection string.
///
/// A connection is used by one thread at a time: the pool hands it out and takes it back.
// @unchecked Sendable: the pool gives a connection to one borrower at a time; libpq is thread-safe per connection.
@safe final class PostgresConnection: @unchecked Sendable {
    /// A value bound to or read from a statement.
    typealias Value = CatalogValue

    private let handle: OpaquePointer
    /// Set when libpq lost the server: never reused.
    private var broken = false

    /// PQconnectdb (a `postgres://` URL or `key=value` string; libpq reads `PGPASSWORD` and `~/.pgpass` itself),
    /// then `statement_timeout` and quiet notices.
    init(conninfo: String, statementTimeoutMilliseconds: Int) throws(ReceiverError) {
        guard let opened = unsafe PQconnectdb(conninfo) else {
            throw ReceiverError(.unavailable, "cannot reach the catalogue server: out of memory")
        }
        guard unsafe PQstatus(opened) == CONNECTION_OK else {
            let message = unsafe Self.trimmed(PQerrorMessage(opened))
            unsafe PQfinish(opened)
            throw PostgresFailure.connect(message, redacting: Self.password(in: conninfo))
        }
        unsafe handle = opened
        try execute("SET statement_timeout = \(max(statementTimeoutMilliseconds, 1))")
        try execute("SET client_min_messages = warning")
    }

    /// PQconninfoParse: nil when `conninfo` parses, otherwise why not (libpq's text is not shown: it can quote a
    /// password).
    static func parseProblem(_ conninfo: String) -> String? {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = unsafe PQconninfoParse(conninfo, &error) else {
            if let error = unsafe error { unsafe PQfreemem(error) }
            return "the catalogue URL does not parse as a PostgreSQL connection string"
        }
        unsafe PQconninfoFree(options)
        return nil
    }

    /// PQconninfoParse: the password written in `conninfo`, if any (to keep it out of messages).
    static func password(in conninfo: String) -> String? {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = unsafe PQconninfoParse(conninfo, &error) else {
            if let error = unsafe error { unsafe PQfreemem(error) }
            return nil
        }
        defer { unsafe PQconninfoFree(options) }
        var option = unsafe options
        while let keyword = unsafe option.pointee.keyword {
            if unsafe String(cString: keyword) == "password", let value = unsafe option.pointee.val {
                let text = unsafe String(cString: value)
                return text.isEmpty ? nil : text
            }
            unsafe option += 1
        }
        return nil
    }

    /// PQfinish.
    deinit { unsafe PQfinish(handle) }

    /// False once the server went away or the connection was left inside a transaction (PQstatus,
    /// PQtransactionStatus): the pool drops such a connection instead of reusing it.
    var isReusable: Bool {
        unsafe !broken && PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Runs `sql` (one statement) with `parameters` bound as `$1 ...`; returns the rows it changed (PQcmdTuples).
    @discardableResult
    func execute(_ sql: String, _ parameters: [Value] = []) throws(ReceiverError) -> Int {
        var changed = 0
        _ = try unsafe run(sql, parameters) { result in
            if let text = unsafe PQcmdTuples(result) { changed = Int(unsafe String(cString: text)) ?? 0 }
        }
        return changed
    }

    /// Runs `sql` with `parameters`; returns every row.
    func query(_ sql: String, _ parameters: [Value] = []) throws(ReceiverError) -> [[Value]] {
        try unsafe run(sql, parameters) { _ in }
    }

    /// Runs `body` inside `BEGIN` ... `COMMIT`; any error rolls back. Durable when it returns (the server's
    /// `synchronous_commit`).
    func transaction<T>(_ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        try execute("BEGIN")
        do throws(ReceiverError) {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if unsafe !broken && PQstatus(handle) == CONNECTION_OK { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` inside a savepoint of the open transaction: an error undoes only what `body` did.
    func savepoint<T>(_ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        try execute("SAVEPOINT aether_call")
        do throws(ReceiverError) {
            let result = try body()
            try execute("RELEASE SAVEPOINT aether_call")
            return result
        } catch {
            if unsafe !broken && PQstatus(handle) == CONNECTION_OK {
                _ = try? execute("ROLLBACK TO SAVEPOINT aether_call")
            }
            throw error
        }
    }

    // MARK: Statements

    /// PQexecParams (text parameters except bytea, which goes binary as type 17), PQresultStatus, PQntuples,
    /// PQnfields, PQgetisnull, PQftype, PQgetvalue, PQclear.
    private func run(
        _ sql: String, _ parameters: [Value], _ inspect: (OpaquePointer) -> Void
    ) throws(ReceiverError) -> [[Value]] {
        var storage: [UnsafeMutableRawPointer?] = unsafe []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        var types: [UInt32] = []
        defer { unsafe storage.forEach { unsafe $0?.deallocate() } }
        for value in parameters {
            switch value {
            case .null:
                unsafe storage.append(nil)
                lengths.append(0)
                formats.append(0)
                types.append(0)
            case .integer(let number):
                unsafe storage.append(Self.copy(Array("\(number)".utf8) + [0]))
                lengths.append(0)
                formats.append(0)
                types.append(20)
            case .text(let text):
                unsafe storage.append(Self.copy(Array(text.utf8) + [0]))
                lengths.append(0)
                formats.append(0)
                types.append(0)
            case .blob(let bytes):
                unsafe storage.append(Self.copy(bytes.isEmpty ? [0] : bytes))
                lengths.append(Int32(clamping: bytes.count))
                formats.append(1)
                types.append(17)
            }
        }
        let pointers = unsafe storage.map {
            unsafe $0.map { unsafe UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }
        }
        let result = unsafe pointers.withUnsafeBufferPointer { values in
            unsafe lengths.withUnsafeBufferPointer { lengthBuffer in
                unsafe formats.withUnsafeBufferPointer { formatBuffer in
                    unsafe types.withUnsafeBufferPointer { typeBuffer in
                        unsafe PQexecParams(
                            handle, sql, Int32(parameters.count), typeBuffer.baseAddress, values.baseAddress,
                            lengthBuffer.baseAddress, formatBuffer.baseAddress, 0)
                    }
                }
            }
        }
        guard let result = unsafe result else {
            broken = true
            throw PostgresFailure.statement(
                sqlState: nil, message: unsafe Self.trimmed(PQerrorMessage(handle)), connectionLost: true)
        }
        defer { unsafe PQclear(result) }
        let status = unsafe PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let state = unsafe PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { unsafe String(cString: $0) }
            let message = unsafe Self.trimmed(PQresultErrorMessage(result))
            // No SQLSTATE: libpq itself failed (the server closed the connection), not a statement.
            let lost = unsafe state == nil || PQstatus(handle) != CONNECTION_OK
            if lost { broken = true }
            throw PostgresFailure.statement(sqlState: state, message: message, connectionLost: lost)
        }
        unsafe inspect(result)
        let rowCount = unsafe PQntuples(result)
        let columnCount = unsafe PQnfields(result)
        var rows: [[Value]] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [Value] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if unsafe PQgetisnull(result, row, column) != 0 {
                    values.append(.null)
                    continue
                }
                let text = unsafe PQgetvalue(result, row, column).map { unsafe String(cString: $0) } ?? ""
                switch unsafe PQftype(result, column) {
                case 20, 21, 23:
                    guard let number = Int64(text) else {
                        throw ReceiverError(.storageFailed, "the catalogue answered a malformed integer")
                    }
                    values.append(.integer(number))
                case 16: values.append(.integer(text == "t" ? 1 : 0))
                case 17: values.append(.blob(try Self.byteaHex(text)))
                default: values.append(.text(text))
                }
            }
            rows.append(values)
        }
        return rows
    }

    private static func copy(_ bytes: [UInt8]) -> UnsafeMutableRawPointer {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 1)
        unsafe bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress { unsafe pointer.copyMemory(from: base, byteCount: raw.count) }
        }
        return unsafe pointer
    }

    private static func trimmed(_ text: UnsafePointer<CChar>?) -> String {
        guard let text = unsafe text else { return "no message" }
        let message = unsafe String(cString: text)
        return String(message.split(separator: "\n").first ?? "no message")
    }

    /// bytea's text output `\x` followed by hex digits.
    private static func byteaHex(_ text: String) throws(ReceiverError) -> [UInt8] {
        let digits = Array(text.utf8)
        guard digits.count >= 2, digits[0] == UInt8(ascii: "\\"), digits[1] == UInt8(ascii: "x"),
            digits.count % 2 == 0
        else { throw ReceiverError(.storageFailed, "the catalogue answered a bytea value not in hex form") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2 - 1)
        var index = 2
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else {
                throw ReceiverError(.storageFailed, "the catalogue answered a bytea value not in hex form")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension PostgresConnection: CatalogConnection {
    static func placeholder(_ n: Int) -> String { "$\(n)" }
    static let offsetColumn = "stream_offset"
    static func boolean(_ value: Bool) -> CatalogValue { .text(value ? "true" : "false") }
    static let parityLinkAndRebuilt = "NULL::bytea, false"
}
