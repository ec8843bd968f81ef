/// The JSON shape of a manifest, before validation. Keys are written sorted (canonical form).
struct ManifestDocument: Codable, Sendable {
    struct Chunk: Codable, Sendable {
        var crc32c: String
        var length: Int
        var sha256: String

        private enum CodingKeys: String, CodingKey, CaseIterable { case crc32c, length, sha256 }

        init(crc32c: String, length: Int, sha256: String) {
            self.crc32c = crc32c
            self.length = length
            self.sha256 = sha256
        }

        init(from decoder: any Decoder) throws {
            try StrictCoding.requireExactKeys(decoder, CodingKeys.allCases, code: .malformedManifest)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            crc32c = try container.decode(String.self, forKey: .crc32c)
            length = try container.decode(Int.self, forKey: .length)
            sha256 = try container.decode(String.self, forKey: .sha256)
        }
    }

    var chainHead: String
    var chainSessionID: String
    var chunkSize: Int
    var chunking: String
    var chunks: [Chunk]
    var cid: String
    var fileSHA256: String
    var fileSize: UInt64
    var formatVersion: Int
    var merkleRoot: String

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case chainHead, chainSessionID, chunkSize, chunking, chunks, cid, fileSHA256, fileSize, formatVersion,
            merkleRoot
    }

    init(
        chainHead: String, chainSessionID: String, chunkSize: Int, chunking: String, chunks: [Chunk], cid: String,
        fileSHA256: String, fileSize: UInt64, formatVersion: Int, merkleRoot: String
    ) {
        self.chainHead = chainHead
        self.chainSessionID = chainSessionID
        self.chunkSize = chunkSize
        self.chunking = chunking
        self.chunks = chunks
        self.cid = cid
        self.fileSHA256 = fileSHA256
        self.fileSize = fileSize
        self.formatVersion = formatVersion
        self.merkleRoot = merkleRoot
    }

    init(from decoder: any Decoder) throws {
        try StrictCoding.requireExactKeys(decoder, CodingKeys.allCases, code: .malformedManifest)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        chainHead = try container.decode(String.self, forKey: .chainHead)
        chainSessionID = try container.decode(String.self, forKey: .chainSessionID)
        chunkSize = try container.decode(Int.self, forKey: .chunkSize)
        chunking = try container.decode(String.self, forKey: .chunking)
        chunks = try container.decode([Chunk].self, forKey: .chunks)
        cid = try container.decode(String.self, forKey: .cid)
        fileSHA256 = try container.decode(String.self, forKey: .fileSHA256)
        fileSize = try container.decode(UInt64.self, forKey: .fileSize)
        formatVersion = try container.decode(Int.self, forKey: .formatVersion)
        merkleRoot = try container.decode(String.self, forKey: .merkleRoot)
    }
}
