package import AetherIO

/// The complete request (`docs/PROTOCOL.md` section 3.8), `application/aether-complete+json`:
/// `{"chainHead":"<hex>","fileSHA256":"<hex>","merkleRoot":"<hex>"}`.
package struct NativeCompleteRequest: Sendable, Hashable {
    /// The commitment chain head the client computed.
    package var chainHead: Digest32
    /// SHA-256 of the whole object.
    package var fileSHA256: Digest32
    /// The Merkle root over the chunk hashes.
    package var merkleRoot: Digest32
    /// The final object size, sent only for an upload created without one (`NativeCreateRequest.sizeDeferred`).
    package var size: Int64?

    /// A request.
    package init(chainHead: Digest32, fileSHA256: Digest32, merkleRoot: Digest32, size: Int64? = nil) {
        self.chainHead = chainHead
        self.fileSHA256 = fileSHA256
        self.merkleRoot = merkleRoot
        self.size = size
    }

    /// Parses a body.
    package init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            JSONValue.parse(bytes, limit: AetherWire.maximumDocumentBytes),
            allowed: ["chainHead", "fileSHA256", "merkleRoot", "size"])
        chainHead = try reader.digest("chainHead")
        fileSHA256 = try reader.digest("fileSHA256")
        merkleRoot = try reader.digest("merkleRoot")
        size = try reader.optional("size").map { (value) throws(AetherProtocolError) in
            try JSONObjectReader.integer(value, 0...AetherWire.maximumInteger, name: "size")
        }
    }

    /// The canonical body.
    package var jsonBytes: [UInt8] {
        var members: [String: JSONValue] = [
            "chainHead": .string(chainHead.hex), "fileSHA256": .string(fileSHA256.hex),
            "merkleRoot": .string(merkleRoot.hex),
        ]
        if let size { members["size"] = .integer(size) }
        return JSONValue.object(members).canonicalBytes
    }
}
