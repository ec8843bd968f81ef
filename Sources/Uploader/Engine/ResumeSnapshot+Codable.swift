import AetherIO
import AetherTransport
import FoundationEssentials

extension ResumeSnapshot: Codable {
    private enum CodingKeys: String, CodingKey {
        case version, filePath = "file_path", destination, mode = "protocol", endpoint, fingerprint, remote
        case partSize = "part_size", partCount = "part_count", chainSessionID = "chain_session_id"
        case acknowledged, createdAt = "created_at", receiptMismatch = "receipt_mismatch"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        guard version == Self.currentVersion else {
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: container, debugDescription: "unsupported snapshot version \(version)")
        }
        filePath = try container.decode([UInt8].self, forKey: .filePath)
        destination = try container.decode(String.self, forKey: .destination)
        let name = try container.decode(String.self, forKey: .mode)
        do {
            mode = try TransportMode(name: name)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .mode, in: container, debugDescription: error.message)
        }
        endpoint = try container.decodeIfPresent(String.self, forKey: .endpoint)
        fingerprint = try container.decode(Fingerprint.self, forKey: .fingerprint)
        remote = try container.decode(RemoteUpload.self, forKey: .remote)
        partSize = try container.decode(Int64.self, forKey: .partSize)
        partCount = try container.decode(Int.self, forKey: .partCount)
        chainSessionID = try container.decode(String.self, forKey: .chainSessionID)
        let parts = try container.decode([AcknowledgedPart].self, forKey: .acknowledged)
        createdAt = try container.decode(Int64.self, forKey: .createdAt)
        receiptMismatch = try container.decodeIfPresent(String.self, forKey: .receiptMismatch)
        guard partSize > 0, partCount > 0, partCount <= 1 << 24 else {
            throw DecodingError.dataCorruptedError(
                forKey: .partSize, in: container, debugDescription: "part size or count out of range")
        }
        var acknowledged: [Int: AcknowledgedPart] = [:]
        for part in parts {
            let index = part.receipt.index
            guard index >= 0, index < partCount, acknowledged[index] == nil, part.receipt.length >= 0,
                part.receipt.length <= partSize, (try? Digest32(hex: part.sha256)) != nil
            else {
                throw DecodingError.dataCorruptedError(
                    forKey: .acknowledged, in: container, debugDescription: "an acknowledged part is malformed")
            }
            acknowledged[index] = part
        }
        self.acknowledged = acknowledged
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(filePath, forKey: .filePath)
        try container.encode(destination, forKey: .destination)
        try container.encode(mode.description, forKey: .mode)
        try container.encodeIfPresent(endpoint, forKey: .endpoint)
        try container.encode(fingerprint, forKey: .fingerprint)
        try container.encode(remote, forKey: .remote)
        try container.encode(partSize, forKey: .partSize)
        try container.encode(partCount, forKey: .partCount)
        try container.encode(chainSessionID, forKey: .chainSessionID)
        try container.encode(acknowledged.keys.sorted().compactMap { acknowledged[$0] }, forKey: .acknowledged)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(receiptMismatch, forKey: .receiptMismatch)
    }

    /// The snapshot as canonical JSON bytes (sorted keys).
    public func serialized() throws(UploaderError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return Array(try encoder.encode(self))
        } catch {
            throw UploaderError(.snapshotUnavailable, "the resume snapshot could not be encoded")
        }
    }

    /// Decodes bytes written by `serialized()`; anything else is `.snapshotDamaged` (never a partial value).
    public static func deserialize(_ bytes: [UInt8]) throws(UploaderError) -> ResumeSnapshot {
        do {
            return try JSONDecoder().decode(ResumeSnapshot.self, from: Data(bytes))
        } catch {
            throw UploaderError(.snapshotDamaged, "the resume snapshot does not decode")
        }
    }
}
