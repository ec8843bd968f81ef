/// An RFC 9457 problem (`docs/PROTOCOL.md` section 7), `application/problem+json`, with `type`
/// `urn:aether:problem:{name}`, `title`, `status`, `detail` and, where they apply, `chunk`, `offset` and
/// `expected`. `detail` never carries key material, tokens or file contents.
package struct ProblemDocument: Sendable, Hashable {
    /// The problem name (`digest-mismatch`): lowercase letters, digits and `-`, at most 64 bytes.
    package var name: String
    /// A short summary for people.
    package var title: String
    /// The HTTP status (400 ... 599).
    package var status: Int
    /// This occurrence, for people.
    package var detail: String
    /// The chunk index the problem is about.
    package var chunk: Int?
    /// The offset the receiver holds.
    package var offset: Int64?
    /// The value the receiver expected (a length or an offset).
    package var expected: Int64?

    /// The `type` prefix.
    package static let typePrefix = "urn:aether:problem:"

    /// A problem.
    package init(
        name: String, title: String, status: Int, detail: String, chunk: Int? = nil, offset: Int64? = nil,
        expected: Int64? = nil
    ) {
        self.name = name
        self.title = title
        self.status = status
        self.detail = detail
        self.chunk = chunk
        self.offset = offset
        self.expected = expected
    }

    /// The `type` member.
    package var type: String { Self.typePrefix + name }

    static func isName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// Parses a body (at most `AetherWire.maximumDocumentBytes`); `title` and `detail` are at most 1,024 bytes.
    package init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        try self.init(value: JSONValue.parse(bytes, limit: AetherWire.maximumDocumentBytes))
    }

    /// Parses a parsed document (`path` names it in errors).
    init(value: JSONValue, path: String = "") throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            value, path: path,
            allowed: ["chunk", "detail", "expected", "offset", "status", "title", "type"])
        let type = try reader.string("type", maximumBytes: 128)
        guard type.hasPrefix(Self.typePrefix), Self.isName(String(type.dropFirst(Self.typePrefix.count))) else {
            throw AetherProtocolError(.malformed, member: "type", "type is not urn:aether:problem:{name}")
        }
        name = String(type.dropFirst(Self.typePrefix.count))
        title = try reader.string("title", maximumBytes: 1024)
        status = try reader.int("status", 400...599)
        detail = try reader.string("detail", maximumBytes: 1024)
        chunk = try reader.optional("chunk").map { (value) throws(AetherProtocolError) in
            Int(try JSONObjectReader.integer(value, 0...Int64(AetherWire.maximumChunks * 2), name: "chunk"))
        }
        offset = try reader.optional("offset").map { (value) throws(AetherProtocolError) in
            try JSONObjectReader.integer(value, 0...AetherWire.maximumInteger, name: "offset")
        }
        expected = try reader.optional("expected").map { (value) throws(AetherProtocolError) in
            try JSONObjectReader.integer(value, 0...AetherWire.maximumInteger, name: "expected")
        }
    }

    /// The canonical body; absent optional members are left out.
    package var jsonBytes: [UInt8] { jsonValue.canonicalBytes }

    /// The document as a JSON value.
    var jsonValue: JSONValue {
        var members: [String: JSONValue] = [
            "detail": .string(detail), "status": .integer(status), "title": .string(title), "type": .string(type),
        ]
        if let chunk { members["chunk"] = .integer(chunk) }
        if let offset { members["offset"] = .integer(offset) }
        if let expected { members["expected"] = .integer(expected) }
        return JSONValue.object(members)
    }
}
