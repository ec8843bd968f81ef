public import AetherIO

/// The complete request (`docs/PROTOCOL.md` section 3.8), `application/aether-complete+json`:
/// `{"chainHead":"<hex>","fileSHA256":"<hex>","merkleRoot":"<hex>"}`.
public struct NativeCompleteRequest: Sendable, Hashable {
    /// The commitment chain head the client computed.
    public var chainHead: Digest32
    /// SHA-256 of the whole object.
    public var fileSHA256: Digest32
    /// The Merkle root over the chunk hashes.
    public var merkleRoot: Digest32

    /// A request.
    public init(chainHead: Digest32, fileSHA256: Digest32, merkleRoot: Digest32) {
        self.chainHead = chainHead
        self.fileSHA256 = fileSHA256
        self.merkleRoot = merkleRoot
    }

    /// Parses a body.
    public init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            JSONValue.parse(bytes, limit: AetherWire.maximumDocumentBytes),
            allowed: ["chainHead", "fileSHA256", "merkleRoot"])
        chainHead = try reader.digest("chainHead")
        fileSHA256 = try reader.digest("fileSHA256")
        merkleRoot = try reader.digest("merkleRoot")
    }

    /// The canonical body.
    public var jsonBytes: [UInt8] {
        JSONValue.object([
            "chainHead": .string(chainHead.hex), "fileSHA256": .string(fileSHA256.hex),
            "merkleRoot": .string(merkleRoot.hex),
        ]).canonicalBytes
    }
}
