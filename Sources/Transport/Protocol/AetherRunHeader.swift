package import AetherIO

/// `Aether-Chunk` of a run request (`docs/PROTOCOL.md` section 3.2.1): `count` consecutive chunks from the path's
/// index in one body. Members, in this order: `count` (Integer, 1...65535), `length` (Integer, the chunks' bytes,
/// uncompressed), optionally `from` (Integer: a continuation, section 3.2.2, whose body starts at byte `from` of the
/// first chunk), `crc32c` and `sha-256` (inner lists of `count` Byte Sequences of 4 and 32 bytes, one per chunk in
/// order) and, optionally, `link` (the commitment-chain link of the run's last chunk, 32 bytes). Parsing refuses
/// unknown, missing and mistyped members, lists whose length is not `count` and a `from` not in 1..<`length`.
package struct AetherRunHeader: Sendable, Hashable {
    /// Chunks in the run.
    package var count: Int
    /// The chunks' length in bytes (every chunk's full length added; a continuation's body is `length - from`).
    package var length: Int64
    /// Where the body starts in the first chunk: nil (or 0) for a whole run; a continuation (section 3.2.2) carries
    /// the first chunk from byte `from` on, the receiver holding its first `from` bytes.
    package var from: Int64?
    /// CRC32C of each chunk, in order.
    package var crc32c: [UInt32]
    /// SHA-256 of each chunk, in order.
    package var sha256: [Digest32]
    /// The link `L[first + count - 1]`, which commits to every chunk before it.
    package var link: Digest32?

    /// A header.
    package init(length: Int64, crc32c: [UInt32], sha256: [Digest32], link: Digest32? = nil, from: Int64? = nil) {
        self.count = sha256.count
        self.length = length
        self.from = from
        self.crc32c = crc32c
        self.sha256 = sha256
        self.link = link
    }

    /// Whether an `Aether-Chunk` value describes a run (it has a `count` member).
    package static func isRun(_ value: String) -> Bool {
        guard let members = StructuredField.dictionary(value) else { return false }
        return members.contains { $0.key == "count" }
    }

    /// Parses a field value.
    package init(parsing value: String) throws(AetherProtocolError) {
        let members = try AetherHeaderMembers(value, field: AetherWire.chunkField)
        try members.refuseUnknown(["count", "length", "from", "crc32c", "sha-256", "link"])
        count = Int(try members.integer("count", 1...65_535))
        length = try members.integer("length", 0...AetherWire.maximumInteger)
        from = members.has("from") ? try members.integer("from", 1...AetherWire.maximumInteger) : nil
        if let from, from >= length {
            throw AetherProtocolError(.inconsistent, member: "from", "from must be below the run's length")
        }
        crc32c = try Self.list("crc32c", count: count, bytes: 4, members).map { bytes in
            bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
        sha256 = try Self.list("sha-256", count: count, bytes: 32, members).map { bytes throws(AetherProtocolError) in
            guard let digest = try? Digest32(bytes: bytes) else {
                throw AetherProtocolError(.outOfRange, member: "sha-256", "an sha-256 of the run is not 32 bytes")
            }
            return digest
        }
        link = members.has("link") ? try members.digest("link") : nil
    }

    private static func list(_ key: String, count: Int, bytes: Int, _ members: AetherHeaderMembers)
        throws(AetherProtocolError) -> [[UInt8]]
    {
        guard let items = members.listItems[key] else {
            if members.has(key) {
                throw AetherProtocolError(
                    .wrongType, member: key, "\(AetherWire.chunkField) member \(key) is not a list")
            }
            throw AetherProtocolError(.missingMember, member: key, "\(AetherWire.chunkField) has no \(key)")
        }
        guard items.count == count else {
            throw AetherProtocolError(
                .inconsistent, member: key, "\(AetherWire.chunkField) lists \(items.count) \(key) for \(count) chunks")
        }
        var out: [[UInt8]] = []
        for item in items {
            guard case .bytes(let value) = item, value.count == bytes else {
                throw AetherProtocolError(.wrongType, member: key, "a \(key) of the run is not \(bytes) bytes")
            }
            out.append(value)
        }
        return out
    }

    /// The bytes the body carries: `length`, less `from` for a continuation.
    package var bodyLength: Int64 { length - (from ?? 0) }

    /// The field value, e.g. `count=2, length=8, crc32c=(:...: :...:), sha-256=(:...: :...:), link=:...:`; `from`
    /// after `length` when it is above 0.
    package var fieldValue: String {
        func bigEndian(_ value: UInt32) -> [UInt8] {
            [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        var text = "count=\(count), length=\(length)"
        if let from, from > 0 { text += ", from=\(from)" }
        text += ", crc32c=(" + crc32c.map { StructuredField.serialize(bigEndian($0)) }.joined(separator: " ") + ")"
        text += ", sha-256=(" + sha256.map { StructuredField.serialize($0.bytes) }.joined(separator: " ") + ")"
        if let link { text += ", link=" + StructuredField.serialize(link.bytes) }
        return text
    }
}

/// `Aether-Run-Receipt` (section 3.2.1): the chunks of a run the receiver holds, from the first: `index` (the run's
/// first chunk), `count` (how many of the run's chunks, from the first, are stored; 0...65535) and `sha-256` (an inner
/// list of their SHA-256 as the receiver computed them). Sent with the success answer and with a problem answer
/// that stopped the run part way.
package struct AetherRunReceiptHeader: Sendable, Hashable {
    /// The run's first chunk.
    package var index: Int
    /// SHA-256 of each stored chunk, from the first.
    package var sha256: [Digest32]

    /// A receipt.
    package init(index: Int, sha256: [Digest32]) {
        self.index = index
        self.sha256 = sha256
    }

    /// Parses a field value; unknown members are refused.
    package init(parsing value: String) throws(AetherProtocolError) {
        let members = try AetherHeaderMembers(value, field: AetherWire.runReceiptField)
        try members.refuseUnknown(["index", "count", "sha-256"])
        index = Int(try members.integer("index", 0...Int64(AetherWire.maximumChunks)))
        let count = Int(try members.integer("count", 0...65_535))
        let items = members.listItems["sha-256"] ?? []
        guard items.count == count, count == 0 || members.listItems["sha-256"] != nil else {
            throw AetherProtocolError(
                .inconsistent, member: "sha-256",
                "\(AetherWire.runReceiptField) lists \(items.count) digests for \(count)")
        }
        var digests: [Digest32] = []
        for item in items {
            guard case .bytes(let bytes) = item, bytes.count == 32, let digest = try? Digest32(bytes: bytes) else {
                throw AetherProtocolError(.wrongType, member: "sha-256", "a receipt digest is not 32 bytes")
            }
            digests.append(digest)
        }
        sha256 = digests
    }

    /// The field value, e.g. `index=4, count=2, sha-256=(:...: :...:)`.
    package var fieldValue: String {
        "index=\(index), count=\(sha256.count), sha-256=("
            + sha256.map { StructuredField.serialize($0.bytes) }.joined(separator: " ") + ")"
    }
}
