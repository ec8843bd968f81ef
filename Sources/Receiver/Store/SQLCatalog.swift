import AetherIO

/// A connection the SQL catalogue runs its statements on, with the few words its database spells its own way.
protocol CatalogConnection {
    /// Runs a statement; returns the rows it changed.
    @discardableResult
    func execute(_ sql: String, _ parameters: [CatalogValue]) throws(ReceiverError) -> Int
    /// Runs a query; returns its rows.
    func query(_ sql: String, _ parameters: [CatalogValue]) throws(ReceiverError) -> [[CatalogValue]]
    /// The `n`-th (from 1) parameter placeholder: `?n` or `$n`, so a statement may use them in any order.
    static func placeholder(_ n: Int) -> String
    /// The name of the upload's stream offset column (`offset` is reserved in PostgreSQL).
    static var offsetColumn: String { get }
    /// A boolean parameter as the database's column takes it.
    static func boolean(_ value: Bool) -> CatalogValue
    /// The select list that stands for a parity row's missing link and `rebuilt` (typed where the database asks).
    static var parityLinkAndRebuilt: String { get }
}

extension CatalogConnection {
    /// Placeholders `first...last`, comma separated.
    static func placeholders(_ range: ClosedRange<Int>) -> String {
        range.map { placeholder($0) }.joined(separator: ", ")
    }
}

/// The upload catalogue over SQL, written once for every database: each conforming catalogue gives its connection
/// (with its dialect), how a read and a transaction run on it, its migrations and its fleet coordination; every
/// statement of `UploadCatalog` lives here.
protocol SQLCatalog: UploadCatalog {
    associatedtype Connection: CatalogConnection
    /// Runs `body` on a connection (inside the transaction `serialized` holds, where there is one).
    func read<T>(_ body: (Connection) throws(ReceiverError) -> T) throws(ReceiverError) -> T
    /// Runs `body` as one transaction (or, inside `serialized`, one savepoint of it).
    func write(_ body: (Connection) throws(ReceiverError) -> Void) throws(ReceiverError)
}

extension SQLCatalog {
    public func insert(_ record: UploadRecord) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            try db.execute(
                "INSERT INTO uploads (\(Self.uploadColumns)) VALUES (\(Connection.placeholders(1...20)))",
                Self.values(record))
            try Self.audit(db, record.id, "created \(record.uploadProtocol.rawValue)", at: record.createdAt)
        }
    }

    public func record(_ id: UploadID) throws(ReceiverError) -> UploadRecord? {
        try read { db throws(ReceiverError) in
            let rows = try db.query(
                "SELECT \(Self.uploadColumns) FROM uploads WHERE id = \(Connection.placeholder(1))",
                [.text(id.rawValue)])
            return try rows.first.map { row throws(ReceiverError) in try CatalogRow.record(from: row) }
        }
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
                "SELECT COUNT(*) FROM uploads WHERE owner = \(Connection.placeholder(1)) AND state = 'open'",
                [.text(owner.name)])
            guard case .integer(let count) = rows.first?.first else { throw CatalogRow.damaged("uploads") }
            return Int(count)
        }
    }

    public func chunkReceipts(_ id: UploadID) throws(ReceiverError) -> [ChunkReceipt] {
        try read { db throws(ReceiverError) in
            try Self.receipts(
                db,
                "SELECT idx, length, sha256, crc32c, link, rebuilt FROM chunks WHERE upload = "
                    + "\(Connection.placeholder(1)) ORDER BY idx", [.text(id.rawValue)])
        }
    }

    public func chunkReceipt(_ id: UploadID, index: Int) throws(ReceiverError) -> ChunkReceipt? {
        try read { db throws(ReceiverError) in
            try Self.receipts(
                db,
                "SELECT idx, length, sha256, crc32c, link, rebuilt FROM chunks WHERE upload = "
                    + "\(Connection.placeholder(1)) AND idx = \(Connection.placeholder(2))",
                [.text(id.rawValue), .integer(Int64(index))]
            ).first
        }
    }

    public func parityReceipts(_ id: UploadID) throws(ReceiverError) -> [ChunkReceipt] {
        try read { db throws(ReceiverError) in
            try Self.receipts(
                db,
                "SELECT idx, length, sha256, crc32c, \(Connection.parityLinkAndRebuilt) FROM parity "
                    + "WHERE upload = \(Connection.placeholder(1)) ORDER BY idx", [.text(id.rawValue)])
        }
    }

    public func recordChunks(_ receipts: [ChunkReceipt], upload: UploadRecord) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            for receipt in receipts {
                try db.execute(
                    "INSERT INTO chunks (upload, idx, length, sha256, crc32c, link, rebuilt) VALUES "
                        + "(\(Connection.placeholders(1...7)))",
                    [
                        .text(upload.id.rawValue), .integer(Int64(receipt.index)), .integer(Int64(receipt.length)),
                        .blob(receipt.sha256.bytes), .integer(Int64(receipt.crc32c)),
                        receipt.link.map { .blob($0.bytes) } ?? .null, Connection.boolean(receipt.rebuilt),
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
                "INSERT INTO parity (upload, idx, length, sha256, crc32c) VALUES (\(Connection.placeholders(1...5)))",
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
                VALUES (\(Connection.placeholders(1...8)))
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
                // The owner's first copy at this chunk size stays the one the index names.
                try db.execute(
                    "INSERT INTO objects (owner, content_id, chunk_size, upload, size, file_sha256) VALUES "
                        + "(\(Connection.placeholders(1...6))) ON CONFLICT (owner, content_id, chunk_size) DO NOTHING",
                    [
                        .text(object.owner.name), .text(object.contentID), .integer(Int64(object.chunkSize)),
                        .text(object.upload.rawValue), .integer(object.size), .blob(object.fileSHA256.bytes),
                    ])
            }
            try Self.audit(db, upload.id, "complete", at: receipt.completedAt)
        }
    }

    public func receipt(_ id: UploadID) throws(ReceiverError) -> UploadReceiptRecord? {
        try read { db throws(ReceiverError) in
            let rows = try db.query(
                "SELECT chain_head, chunks, cid, completed_at, file_sha256, merkle_root, size FROM receipts "
                    + "WHERE upload = \(Connection.placeholder(1))", [.text(id.rawValue)])
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

    /// The first entry by upload id, so the same question gets the same answer.
    public func object(contentID: String, chunkSize: Int, owner: ClientIdentity?) throws(ReceiverError)
        -> StoredObject?
    {
        try read { db throws(ReceiverError) in
            var sql =
                "SELECT owner, upload, size, file_sha256 FROM objects WHERE content_id = \(Connection.placeholder(1)) "
                + "AND chunk_size = \(Connection.placeholder(2))"
            var parameters: [CatalogValue] = [.text(contentID), .integer(Int64(chunkSize))]
            if let owner {
                sql += " AND owner = \(Connection.placeholder(3))"
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
    }

    /// Deletes the chunk, parity, object and possession rows of the upload; its upload row and audit stay.
    public func recordRemoval(_ upload: UploadRecord, event: String) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            for table in ["chunks", "parity", "objects", "possession"] {
                try db.execute(
                    "DELETE FROM \(table) WHERE upload = \(Connection.placeholder(1))", [.text(upload.id.rawValue)])
            }
            try Self.updateRow(db, upload)
            try Self.audit(db, upload.id, event, at: upload.updatedAt)
        }
    }

    /// By state, then id.
    public func uploads(in states: Set<UploadState>) throws(ReceiverError) -> [UploadRecord] {
        try read { db throws(ReceiverError) in
            var records: [UploadRecord] = []
            for state in states.sorted(by: { $0.rawValue < $1.rawValue }) {
                let rows = try db.query(
                    "SELECT \(Self.uploadColumns) FROM uploads WHERE state = \(Connection.placeholder(1)) ORDER BY id",
                    [.text(state.rawValue)])
                for row in rows { records.append(try CatalogRow.record(from: row)) }
            }
            return records
        }
    }

    public func idleUploads(before wallSeconds: Int64) throws(ReceiverError) -> [UploadID] {
        try read { db throws(ReceiverError) in
            try db.query(
                "SELECT id FROM uploads WHERE state = 'open' AND updated_at < \(Connection.placeholder(1)) ORDER BY id",
                [.integer(wallSeconds)]
            ).map { row throws(ReceiverError) in
                guard case .text(let text) = row.first else { throw CatalogRow.damaged("uploads.id") }
                return try CatalogRow.uploadID(text)
            }
        }
    }

    public func auditLog(_ id: UploadID) throws(ReceiverError) -> [AuditEntry] {
        try read { db throws(ReceiverError) in
            try db.query(
                "SELECT event, at FROM audit WHERE upload = \(Connection.placeholder(1)) ORDER BY seq",
                [.text(id.rawValue)]
            ).map { row throws(ReceiverError) in
                guard row.count == 2, case .text(let event) = row[0], case .integer(let at) = row[1] else {
                    throw CatalogRow.damaged("audit")
                }
                return AuditEntry(event: event, at: at)
            }
        }
    }

    /// Also forgets every challenge issued before `expiredBefore` (answers to them are refused as late anyway).
    public func recordPossessionChallenge(
        _ id: UploadID, nonce: [UInt8], challenge: [UInt8], issuedAt: Int64, expiredBefore: Int64
    ) throws(ReceiverError) {
        try write { db throws(ReceiverError) in
            try db.execute(
                "DELETE FROM possession WHERE issued_at < \(Connection.placeholder(1))", [.integer(expiredBefore)])
            try db.execute(
                "INSERT INTO possession (upload, nonce, challenge, issued_at) VALUES "
                    + "(\(Connection.placeholders(1...4)))",
                [.text(id.rawValue), .blob(nonce), .blob(challenge), .integer(issuedAt)])
        }
    }

    /// One statement removes and returns it, so that of two receivers given the same answer only one gets it.
    public func takePossessionChallenge(_ id: UploadID, nonce: [UInt8]) throws(ReceiverError) -> [UInt8]? {
        try read { db throws(ReceiverError) in
            let rows = try db.query(
                "DELETE FROM possession WHERE upload = \(Connection.placeholder(1)) AND nonce = "
                    + "\(Connection.placeholder(2)) RETURNING challenge",
                [.text(id.rawValue), .blob(nonce)])
            guard let row = rows.first else { return nil }
            guard row.count == 1, case .blob(let challenge) = row[0] else { throw CatalogRow.damaged("possession") }
            return challenge
        }
    }

    // MARK: Rows

    /// The upload columns in the order `CatalogRow.record(from:)` decodes.
    static var uploadColumnNames: [String] {
        [
            "id", "owner", "protocol", "state", "size", "chunk_size", "chunks", "chain_session", "content_id",
            "parity_data", "parity_count", "metadata", "expected_sha256", "concat", Connection.offsetColumn,
            "chain_verified", "chain_link", "created_at", "updated_at", "failure",
        ]
    }

    /// `uploadColumnNames` as a select or insert list.
    static var uploadColumns: String { uploadColumnNames.joined(separator: ", ") }

    /// `record`'s values in the order of `uploadColumns`.
    static func values(_ record: UploadRecord) -> [CatalogValue] {
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

    private static func updateRow(_ db: Connection, _ record: UploadRecord) throws(ReceiverError) {
        let columns = uploadColumnNames
        let assignments = (1..<columns.count).map { "\(columns[$0]) = \(Connection.placeholder($0 + 1))" }
        let changed = try db.execute(
            "UPDATE uploads SET \(assignments.joined(separator: ", ")) WHERE id = \(Connection.placeholder(1))",
            values(record))
        guard changed == 1 else { throw ReceiverError(.notFound, "no upload has this id") }
    }

    private static func receipts(_ db: Connection, _ sql: String, _ parameters: [CatalogValue])
        throws(ReceiverError) -> [ChunkReceipt]
    {
        try db.query(sql, parameters).map { row throws(ReceiverError) in try CatalogRow.receipt(from: row) }
    }

    private static func audit(_ db: Connection, _ id: UploadID, _ event: String, at: Int64) throws(ReceiverError) {
        try db.execute(
            "INSERT INTO audit (upload, event, at) VALUES (\(Connection.placeholders(1...3)))",
            [.text(id.rawValue), .text(event), .integer(at)])
    }
}
