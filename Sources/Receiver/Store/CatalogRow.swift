import AetherIO

/// A column value as both catalogues read it (SQLite and PostgreSQL bind and return the same four kinds).
enum CatalogValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}

/// The rows both catalogues store, decoded one way: an upload (20 columns in the schema's order) and a chunk
/// receipt (6 columns). A value of the wrong kind is `.storageFailed` naming the table, never a crash.
enum CatalogRow {
    static func record(from row: [CatalogValue]) throws(ReceiverError) -> UploadRecord {
        guard row.count == 20, case .text(let id) = row[0], case .text(let owner) = row[1],
            case .text(let protocolName) = row[2], let uploadProtocol = UploadProtocol(rawValue: protocolName),
            case .text(let stateName) = row[3], let state = UploadState(rawValue: stateName),
            case .integer(let chunkSize) = row[5], case .integer(let chunks) = row[6],
            case .blob(let metadataBytes) = row[11], case .integer(let offset) = row[14],
            case .integer(let verified) = row[15], case .integer(let createdAt) = row[17],
            case .integer(let updatedAt) = row[18]
        else { throw damaged("uploads") }
        var parity: ParityLayout?
        if case .integer(let data) = row[9], case .integer(let count) = row[10] {
            parity = ParityLayout(data: Int(data), parity: Int(count))
        }
        var concatenation: NewUpload.Concatenation?
        if case .text(let text) = row[13] { concatenation = try concat(text) }
        return UploadRecord(
            id: try uploadID(id), owner: ClientIdentity(owner), uploadProtocol: uploadProtocol, state: state,
            size: optionalInteger(row[4]), chunkSize: Int(chunkSize), chunks: Int(chunks),
            chainSessionID: optionalText(row[7]), contentID: optionalText(row[8]), parity: parity,
            metadata: try MetadataCoding.decode(metadataBytes), expectedSHA256: try optionalDigest(row[12]),
            concatenation: concatenation, offset: offset, chainVerifiedThrough: Int(verified),
            chainLink: try optionalDigest(row[16]), createdAt: createdAt, updatedAt: updatedAt,
            failure: optionalText(row[19]))
    }

    static func receipt(from row: [CatalogValue]) throws(ReceiverError) -> ChunkReceipt {
        guard row.count == 6, case .integer(let index) = row[0], case .integer(let length) = row[1],
            case .integer(let crc) = row[3], case .integer(let rebuilt) = row[5]
        else { throw damaged("chunks") }
        return ChunkReceipt(
            index: Int(index), length: Int(length), sha256: try digest(row[2]),
            crc32c: UInt32(truncatingIfNeeded: crc), link: try optionalDigest(row[4]), rebuilt: rebuilt != 0)
    }

    static func concatText(_ value: NewUpload.Concatenation) -> String {
        switch value {
        case .partial: "partial"
        case .final(let ids): "final:" + ids.map(\.rawValue).joined(separator: ",")
        }
    }

    static func concat(_ text: String) throws(ReceiverError) -> NewUpload.Concatenation {
        if text == "partial" { return .partial }
        guard text.hasPrefix("final:") else { throw damaged("uploads.concat") }
        var ids: [UploadID] = []
        for part in text.dropFirst(6).split(separator: ",") { ids.append(try uploadID(String(part))) }
        return .final(ids)
    }

    static func uploadID(_ text: String) throws(ReceiverError) -> UploadID {
        do { return try UploadID(text) } catch { throw damaged("an upload id") }
    }

    static func digest(_ value: CatalogValue) throws(ReceiverError) -> Digest32 {
        guard case .blob(let bytes) = value, bytes.count == 32, let digest = try? Digest32(bytes: bytes) else {
            throw damaged("a digest")
        }
        return digest
    }

    static func optionalDigest(_ value: CatalogValue) throws(ReceiverError) -> Digest32? {
        if value == .null { return nil }
        return try digest(value)
    }

    static func optionalInteger(_ value: CatalogValue) -> Int64? {
        if case .integer(let number) = value { return number }
        return nil
    }

    static func optionalText(_ value: CatalogValue) -> String? {
        if case .text(let text) = value { return text }
        return nil
    }

    static func damaged(_ what: String) -> ReceiverError {
        ReceiverError(.storageFailed, "the catalogue holds a damaged value in \(what)")
    }
}

/// A connection the SQL catalogues (SQLite, PostgreSQL) run their shared statements on.
protocol CatalogConnection {
    /// Runs a statement; returns the rows it changed.
    @discardableResult
    func execute(_ sql: String, _ parameters: [CatalogValue]) throws(ReceiverError) -> Int
    /// Runs a query; returns its rows.
    func query(_ sql: String, _ parameters: [CatalogValue]) throws(ReceiverError) -> [[CatalogValue]]
    /// The `n`-th (from 1) parameter placeholder of this database's SQL: `?` or `$n`.
    static func placeholder(_ n: Int) -> String
}

/// The statements both SQL catalogues run the same way, with the database's own placeholders.
enum CatalogQueries {
    /// The upload `id`, nil when the catalogue has none; `columns` is the catalogue's upload column list.
    static func record<DB: CatalogConnection>(_ db: DB, _ id: UploadID, columns: String) throws(ReceiverError)
        -> UploadRecord?
    {
        let rows = try db.query(
            "SELECT \(columns) FROM uploads WHERE id = \(DB.placeholder(1))", [.text(id.rawValue)])
        return try rows.first.map { row throws(ReceiverError) in try CatalogRow.record(from: row) }
    }

    /// Every upload in one of `states`, by state then id.
    static func uploads<DB: CatalogConnection>(_ db: DB, in states: Set<UploadState>, columns: String)
        throws(ReceiverError) -> [UploadRecord]
    {
        var records: [UploadRecord] = []
        for state in states.sorted(by: { $0.rawValue < $1.rawValue }) {
            let rows = try db.query(
                "SELECT \(columns) FROM uploads WHERE state = \(DB.placeholder(1)) ORDER BY id", [.text(state.rawValue)]
            )
            for row in rows { records.append(try CatalogRow.record(from: row)) }
        }
        return records
    }

    /// The chunk receipts of `id` in index order, or the one of chunk `index`.
    static func chunkReceipts<DB: CatalogConnection>(_ db: DB, _ id: UploadID, index: Int? = nil)
        throws(ReceiverError) -> [ChunkReceipt]
    {
        let select = "SELECT idx, length, sha256, crc32c, link, rebuilt FROM chunks WHERE upload = \(DB.placeholder(1))"
        let rows =
            if let index {
                try db.query(select + " AND idx = \(DB.placeholder(2))", [.text(id.rawValue), .integer(Int64(index))])
            } else {
                try db.query(select + " ORDER BY idx", [.text(id.rawValue)])
            }
        return try rows.map { row throws(ReceiverError) in try CatalogRow.receipt(from: row) }
    }

    /// The open uploads last changed before `wallSeconds`.
    static func idleUploads<DB: CatalogConnection>(_ db: DB, before wallSeconds: Int64) throws(ReceiverError)
        -> [UploadID]
    {
        try db.query(
            "SELECT id FROM uploads WHERE state = 'open' AND updated_at < \(DB.placeholder(1)) ORDER BY id",
            [.integer(wallSeconds)]
        ).map { row throws(ReceiverError) in
            guard case .text(let text) = row.first else { throw CatalogRow.damaged("uploads.id") }
            return try CatalogRow.uploadID(text)
        }
    }

    /// The audit entries of `id` in order.
    static func auditLog<DB: CatalogConnection>(_ db: DB, _ id: UploadID) throws(ReceiverError) -> [AuditEntry] {
        try db.query(
            "SELECT event, at FROM audit WHERE upload = \(DB.placeholder(1)) ORDER BY seq", [.text(id.rawValue)]
        ).map { row throws(ReceiverError) in
            guard row.count == 2, case .text(let event) = row[0], case .integer(let at) = row[1] else {
                throw CatalogRow.damaged("audit")
            }
            return AuditEntry(event: event, at: at)
        }
    }

    /// Keeps an issued possession challenge of `id` under its nonce, and forgets every one issued before
    /// `expiredBefore` (wall milliseconds; answers to them are refused as late anyway).
    static func recordPossession<DB: CatalogConnection>(
        _ db: DB, _ id: UploadID, nonce: [UInt8], challenge: [UInt8], issuedAt: Int64, expiredBefore: Int64
    ) throws(ReceiverError) {
        try db.execute("DELETE FROM possession WHERE issued_at < \(DB.placeholder(1))", [.integer(expiredBefore)])
        try db.execute(
            "INSERT INTO possession (upload, nonce, challenge, issued_at) VALUES (\(DB.placeholder(1)), "
                + "\(DB.placeholder(2)), \(DB.placeholder(3)), \(DB.placeholder(4)))",
            [.text(id.rawValue), .blob(nonce), .blob(challenge), .integer(issuedAt)])
    }

    /// Removes and returns the challenge of `id` with `nonce` in one statement, so that of two receivers given the
    /// same answer only one gets it; nil when there is none (answered already, expired and forgotten, or never
    /// issued).
    static func takePossession<DB: CatalogConnection>(_ db: DB, _ id: UploadID, nonce: [UInt8])
        throws(ReceiverError) -> [UInt8]?
    {
        let rows = try db.query(
            "DELETE FROM possession WHERE upload = \(DB.placeholder(1)) AND nonce = \(DB.placeholder(2)) "
                + "RETURNING challenge",
            [.text(id.rawValue), .blob(nonce)])
        guard let row = rows.first else { return nil }
        guard row.count == 1, case .blob(let challenge) = row[0] else { throw CatalogRow.damaged("possession") }
        return challenge
    }

    /// Enters `object` in the dedup index unless its owner holds the same content at the same chunk size already.
    static func indexObject<DB: CatalogConnection>(_ db: DB, _ object: StoredObject, ignoring: String, conflict: String)
        throws(ReceiverError)
    {
        let slots = (1...6).map { DB.placeholder($0) }.joined(separator: ", ")
        try db.execute(
            "INSERT \(ignoring) INTO objects (owner, content_id, chunk_size, upload, size, file_sha256) VALUES (\(slots))"
                + conflict,
            [
                .text(object.owner.name), .text(object.contentID), .integer(Int64(object.chunkSize)),
                .text(object.upload.rawValue), .integer(object.size), .blob(object.fileSHA256.bytes),
            ])
    }

    /// An object of the dedup index with `contentID` at `chunkSize`, of `owner` (any owner when nil): the first by
    /// upload id, so the same question gets the same answer.
    static func object<DB: CatalogConnection>(
        _ db: DB, contentID: String, chunkSize: Int, owner: ClientIdentity?
    ) throws(ReceiverError) -> StoredObject? {
        var sql =
            "SELECT owner, upload, size, file_sha256 FROM objects WHERE content_id = \(DB.placeholder(1)) "
            + "AND chunk_size = \(DB.placeholder(2))"
        var parameters: [CatalogValue] = [.text(contentID), .integer(Int64(chunkSize))]
        if let owner {
            sql += " AND owner = \(DB.placeholder(3))"
            parameters.append(.text(owner.name))
        }
        let rows = try db.query(sql + " ORDER BY upload LIMIT 1", parameters)
        guard let row = rows.first else { return nil }
        guard row.count == 4, case .text(let ownerName) = row[0], case .text(let upload) = row[1],
            case .integer(let size) = row[2]
        else { throw CatalogRow.damaged("objects") }
        return StoredObject(
            contentID: contentID, owner: ClientIdentity(ownerName), chunkSize: chunkSize,
            upload: try CatalogRow.uploadID(upload), size: size, fileSHA256: try CatalogRow.digest(row[3]))
    }

    /// Deletes the chunk, parity, object and possession rows of `id` (its upload row and audit stay).
    static func deleteWorkingRows<DB: CatalogConnection>(_ db: DB, _ id: UploadID) throws(ReceiverError) {
        for table in ["chunks", "parity", "objects", "possession"] {
            try db.execute("DELETE FROM \(table) WHERE upload = \(DB.placeholder(1))", [.text(id.rawValue)])
        }
    }
}
