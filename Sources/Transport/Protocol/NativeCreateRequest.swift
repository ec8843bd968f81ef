import AetherIntegrity

/// The create request (`docs/PROTOCOL.md` section 3.1), `application/aether-upload+json`.
package struct NativeCreateRequest: Sendable, Hashable {
    /// The object size in bytes.
    package var size: Int64
    /// Every chunk but the last has this many bytes (a multiple of 16 KiB).
    package var chunkSize: Int64
    /// The chunk count: `ceil(size / chunkSize)`, 1 for an empty object.
    package var chunks: Int
    /// The commitment chain's session id (1 ... 256 UTF-8 bytes).
    package var chainSessionID: String
    /// The object's ACI when known in advance (`aci:1:sha256:<hex>`).
    package var contentID: String?
    /// The parity scheme, if parity shards will be sent.
    package var parity: ParityScheme?
    /// The size-unknown form (a file followed while it grows): `"size":null` on the wire, no `chunks`; `size` and
    /// `chunks` are then 0 here and the completion gives the final size (`NativeCompleteRequest.size`).
    package var sizeDeferred = false
    /// Names and values the receiver keeps with the upload (`metadata`, section 3.1), such as `filename`: at most
    /// `maximumMetadataEntries` entries, names of 1-64 bytes of letters, digits, `-`, `_` and `.`, values of at most
    /// `maximumMetadataValueBytes` UTF-8 bytes. Sent only to a receiver that offers `metadata`; empty, left out.
    package var metadata: [String: String] = [:]

    package static let maximumMetadataEntries = 32
    package static let maximumMetadataValueBytes = 1024

    /// A request; `validate()` (called by `jsonBytes` users and by parsing) checks it.
    package init(
        size: Int64, chunkSize: Int64, chunks: Int, chainSessionID: String, contentID: String? = nil,
        parity: ParityScheme? = nil
    ) {
        self.size = size
        self.chunkSize = chunkSize
        self.chunks = chunks
        self.chainSessionID = chainSessionID
        self.contentID = contentID
        self.parity = parity
    }

    /// The chunk count an object of `size` bytes has in chunks of `chunkSize`.
    package static func chunkCount(size: Int64, chunkSize: Int64) -> Int {
        size == 0 || chunkSize <= 0 ? 1 : Int((size + chunkSize - 1) / chunkSize)
    }

    /// Checks every rule of section 3.1 that does not depend on the receiver's limits.
    package func validate() throws(AetherProtocolError) {
        if sizeDeferred {
            try validateDeferred()
            return
        }
        guard (0...AetherWire.maximumInteger).contains(size) else {
            throw AetherProtocolError(.outOfRange, member: "size", "size is outside 0...\(AetherWire.maximumInteger)")
        }
        guard chunkSize > 0, chunkSize <= AetherWire.maximumInteger, chunkSize % AetherWire.chunkAlignment == 0 else {
            throw AetherProtocolError(
                .outOfRange, member: "chunkSize", "chunkSize is not a positive multiple of 16 KiB")
        }
        guard (1...AetherWire.maximumChunks).contains(chunks) else {
            throw AetherProtocolError(
                .outOfRange, member: "chunks", "chunks is outside 1...\(AetherWire.maximumChunks)")
        }
        guard chunks == Self.chunkCount(size: size, chunkSize: chunkSize) else {
            throw AetherProtocolError(.inconsistent, member: "chunks", "chunks is not ceil(size / chunkSize)")
        }
        guard (1...256).contains(chainSessionID.utf8.count) else {
            throw AetherProtocolError(.outOfRange, member: "chainSessionID", "chainSessionID is not 1...256 bytes")
        }
        if let contentID {
            guard (try? ACI(parsing: contentID)) != nil else {
                throw AetherProtocolError(.malformed, member: "contentID", "contentID is not an ACI")
            }
        }
        try parity?.validate()
        guard metadata.count <= Self.maximumMetadataEntries else {
            throw AetherProtocolError(
                .outOfRange, member: "metadata", "metadata has more than \(Self.maximumMetadataEntries) entries")
        }
        for (name, value) in metadata {
            guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy(Self.isNameByte) else {
                throw AetherProtocolError(
                    .malformed, member: "metadata", "a metadata name is not 1-64 of [A-Za-z0-9._-]")
            }
            guard value.utf8.count <= Self.maximumMetadataValueBytes else {
                throw AetherProtocolError(
                    .outOfRange, member: "metadata.\(name)",
                    "metadata \(name) is longer than \(Self.maximumMetadataValueBytes) bytes")
            }
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || [0x2D, 0x2E, 0x5F].contains(byte)
    }

    /// Parses and validates a body (at most `AetherWire.maximumDocumentBytes`).
    package init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        try self.init(value: JSONValue.parse(bytes, limit: AetherWire.maximumDocumentBytes))
    }

    /// Parses and validates a parsed document (`path` names it in errors: `files[3].create`).
    init(value: JSONValue, path: String = "") throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            value, path: path,
            allowed: ["chainSessionID", "chunkSize", "chunks", "contentID", "metadata", "parity", "size"])
        sizeDeferred = reader.members["size"] == .null
        chunkSize = try reader.integer("chunkSize", 1...AetherWire.maximumInteger)
        if sizeDeferred {
            guard reader.members["chunks"] == nil || reader.members["chunks"] == .null else {
                throw AetherProtocolError(.inconsistent, member: "chunks", "chunks is given while size is null")
            }
            size = 0
            chunks = 0
        } else {
            size = try reader.integer("size", 0...AetherWire.maximumInteger)
            chunks = try reader.int("chunks", 1...AetherWire.maximumChunks)
        }
        chainSessionID = try reader.string("chainSessionID", maximumBytes: 256)
        contentID = try reader.optionalString("contentID", maximumBytes: 256)
        if let value = reader.optional("parity") {
            parity = try ParityScheme.read(
                JSONObjectReader(value, path: reader.name("parity"), allowed: ["code", "data", "parity"]))
        } else {
            parity = nil
        }
        if let value = reader.optional("metadata") {
            guard case .object(let members) = value else { throw reader.wrongType("metadata", "an object") }
            for (name, member) in members {
                guard case .string(let text) = member else { throw reader.wrongType("metadata." + name, "a string") }
                metadata[name] = text
            }
        }
        try validate()
    }

    /// The canonical body.
    package var jsonBytes: [UInt8] { jsonValue.canonicalBytes }

    /// The document as a JSON value.
    var jsonValue: JSONValue {
        var members: [String: JSONValue] = [
            "chainSessionID": .string(chainSessionID), "chunkSize": .integer(chunkSize), "chunks": .integer(chunks),
            "size": .integer(size),
        ]
        if let contentID { members["contentID"] = .string(contentID) }
        if let parity { members["parity"] = .object(parity.jsonMembers) }
        if !metadata.isEmpty { members["metadata"] = .object(metadata.mapValues { .string($0) }) }
        if sizeDeferred {
            members["size"] = .null
            members["chunks"] = nil
        }
        return JSONValue.object(members)
    }
}
