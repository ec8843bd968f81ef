package import AetherIO

/// The receipt (`docs/PROTOCOL.md` section 3.8), `application/aether-receipt+json`: every value is the
/// receiver's own computation from stored bytes.
package struct NativeReceipt: Sendable, Hashable {
    /// The upload id.
    package var id: String
    /// The object size.
    package var size: Int64
    /// The chunk count.
    package var chunks: Int
    /// SHA-256 of the whole object.
    package var fileSHA256: Digest32
    /// The Merkle root over the stored chunk hashes.
    package var merkleRoot: Digest32
    /// The commitment chain head recomputed from the stored chunk hashes.
    package var chainHead: Digest32
    /// The object's CIDv1 (`bafkrei...`, raw codec, SHA-256).
    package var cid: String
    /// When the upload completed, seconds since 1970 (sent as RFC 3339 UTC).
    package var completedAt: Int64

    /// A receipt.
    package init(
        id: String, size: Int64, chunks: Int, fileSHA256: Digest32, merkleRoot: Digest32, chainHead: Digest32,
        cid: String, completedAt: Int64
    ) {
        self.id = id
        self.size = size
        self.chunks = chunks
        self.fileSHA256 = fileSHA256
        self.merkleRoot = merkleRoot
        self.chainHead = chainHead
        self.cid = cid
        self.completedAt = completedAt
    }

    /// Parses and checks a body.
    package init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        try self.init(value: JSONValue.parse(bytes, limit: AetherWire.maximumDocumentBytes))
    }

    /// Parses and checks a parsed document (`path` names it in errors).
    init(value: JSONValue, path: String = "") throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            value, path: path,
            allowed: ["chainHead", "chunks", "cid", "completedAt", "fileSHA256", "id", "merkleRoot", "size"])
        id = try reader.string("id", maximumBytes: 26)
        guard NativeStatusDocument.isUploadID(id) else {
            throw AetherProtocolError(.malformed, member: "id", "id is not 26 characters of lowercase base32")
        }
        size = try reader.integer("size", 0...AetherWire.maximumInteger)
        chunks = try reader.int("chunks", 1...AetherWire.maximumChunks)
        fileSHA256 = try reader.digest("fileSHA256")
        merkleRoot = try reader.digest("merkleRoot")
        chainHead = try reader.digest("chainHead")
        cid = try reader.string("cid", maximumBytes: 128)
        guard !cid.isEmpty, cid.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x32...0x37).contains($0) }) else {
            throw AetherProtocolError(.malformed, member: "cid", "cid is not a base32 CIDv1")
        }
        guard let completedAt = RFC3339Time.parse(try reader.string("completedAt", maximumBytes: 20)) else {
            throw AetherProtocolError(.malformed, member: "completedAt", "completedAt is not an RFC 3339 UTC time")
        }
        self.completedAt = completedAt
    }

    /// The canonical body.
    package var jsonBytes: [UInt8] { jsonValue.canonicalBytes }

    /// The document as a JSON value.
    var jsonValue: JSONValue {
        JSONValue.object([
            "chainHead": .string(chainHead.hex), "chunks": .integer(chunks), "cid": .string(cid),
            "completedAt": .string(RFC3339Time.format(completedAt)), "fileSHA256": .string(fileSHA256.hex),
            "id": .string(id), "merkleRoot": .string(merkleRoot.hex), "size": .integer(size),
        ])
    }
}
