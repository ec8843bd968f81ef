package import AetherIO

/// `Aether-Chunk` (`docs/PROTOCOL.md` section 3.2): what the client computed over one **uncompressed** chunk or
/// parity shard. A Structured Fields Dictionary with `length` (Integer), `crc32c` (4-byte Byte Sequence,
/// big-endian), `sha-256` (32-byte Byte Sequence) and, on data chunks, `link` (the commitment-chain link
/// `L[index]`, 32 bytes). Members are written in that order; parsing refuses unknown, missing and mistyped members.
package struct AetherChunkHeader: Sendable, Hashable {
    /// The uncompressed length in bytes.
    package var length: Int64
    /// CRC32C (Castagnoli) of the uncompressed bytes.
    package var crc32c: UInt32
    /// SHA-256 of the uncompressed bytes.
    package var sha256: Digest32
    /// The commitment-chain link `L[index]`; nil on parity shards.
    package var link: Digest32?

    /// A header.
    package init(length: Int64, crc32c: UInt32, sha256: Digest32, link: Digest32? = nil) {
        self.length = length
        self.crc32c = crc32c
        self.sha256 = sha256
        self.link = link
    }

    /// Parses a field value.
    package init(parsing value: String) throws(AetherProtocolError) {
        let members = try AetherHeaderMembers(value, field: AetherWire.chunkField)
        try members.refuseUnknown(["length", "crc32c", "sha-256", "link"])
        length = try members.integer("length", 0...AetherWire.maximumInteger)
        let crc = try members.bytes("crc32c", count: 4)
        crc32c = crc.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        sha256 = try members.digest("sha-256")
        link = members.has("link") ? try members.digest("link") : nil
    }

    /// The field value, e.g. `length=5, crc32c=:4pyS7A==:, sha-256=:...:, link=:...:`.
    package var fieldValue: String {
        var members: [(key: String, value: StructuredField.Item)] = [
            ("length", .integer(length)),
            (
                "crc32c",
                .bytes([
                    UInt8(crc32c >> 24), UInt8(crc32c >> 16 & 0xFF), UInt8(crc32c >> 8 & 0xFF), UInt8(crc32c & 0xFF),
                ])
            ),
            ("sha-256", .bytes(sha256.bytes)),
        ]
        if let link { members.append(("link", .bytes(link.bytes))) }
        return StructuredField.serialize(dictionary: members) ?? ""
    }
}
