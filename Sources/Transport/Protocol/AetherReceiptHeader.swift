package import AetherIO

/// `Aether-Receipt` (`docs/PROTOCOL.md` section 3.2): the receiver's acknowledgement of one stored chunk,
/// `index=5, sha-256=:...:`, sent with `201` (stored now) and `200` (already stored with the same bytes). For a
/// parity shard the index is the shard's position in the status document's parity bitmap
/// (`group * parity + shard`) and the bare member `parity` follows.
package struct AetherReceiptHeader: Sendable, Hashable {
    /// The chunk index (or the parity shard's position).
    package var index: Int
    /// SHA-256 of the stored (uncompressed) bytes, as the receiver computed it.
    package var sha256: Digest32
    /// Whether this acknowledges a parity shard.
    package var parity: Bool

    /// A receipt.
    package init(index: Int, sha256: Digest32, parity: Bool = false) {
        self.index = index
        self.sha256 = sha256
        self.parity = parity
    }

    /// Parses a field value; unknown members are refused.
    package init(parsing value: String) throws(AetherProtocolError) {
        let members = try AetherHeaderMembers(value, field: AetherWire.receiptField)
        try members.refuseUnknown(["index", "sha-256", "parity"])
        index = Int(try members.integer("index", 0...Int64(AetherWire.maximumChunks * 2)))
        sha256 = try members.digest("sha-256")
        parity = try members.boolean("parity")
    }

    /// The field value.
    package var fieldValue: String {
        var members: [(key: String, value: StructuredField.Item)] = [
            ("index", .integer(Int64(index))), ("sha-256", .bytes(sha256.bytes)),
        ]
        if parity { members.append(("parity", .boolean(true))) }
        return StructuredField.serialize(dictionary: members) ?? ""
    }
}
