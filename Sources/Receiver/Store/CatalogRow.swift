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
