import AetherIO
import FoundationEssentials

/// Reads one JSON object's members for a document's strict parser: every member it does not define is refused,
/// and each accessor names the member (with its path, `parity.data`) in the error it throws.
struct JSONObjectReader {
    let members: [String: JSONValue]
    let path: String

    /// `value` must be an object whose members all appear in `allowed`.
    init(_ value: JSONValue, path: String = "", allowed: Set<String>) throws(AetherProtocolError) {
        guard case .object(let members) = value else {
            throw AetherProtocolError(
                .wrongType, member: path.isEmpty ? nil : path,
                "\(path.isEmpty ? "the document" : path) is not an object")
        }
        self.members = members
        self.path = path
        for key in members.keys.sorted() where !allowed.contains(key) {
            throw AetherProtocolError(.unknownMember, member: name(key), "unknown member \"\(name(key))\"")
        }
    }

    func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    /// The member, or nil when it is absent or null.
    func optional(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    func required(_ key: String) throws(AetherProtocolError) -> JSONValue {
        guard let value = optional(key) else {
            throw AetherProtocolError(.missingMember, member: name(key), "member \"\(name(key))\" is required")
        }
        return value
    }

    func wrongType(_ key: String, _ type: String) -> AetherProtocolError {
        AetherProtocolError(.wrongType, member: name(key), "member \"\(name(key))\" is not \(type)")
    }

    // MARK: Typed members

    static func integer(_ value: JSONValue, _ range: ClosedRange<Int64>, name: String) throws(AetherProtocolError)
        -> Int64
    {
        guard case .number(let text) = value, !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else {
            throw AetherProtocolError(.wrongType, member: name, "member \"\(name)\" is not an integer")
        }
        guard let number = Int64(text), range.contains(number) else {
            throw AetherProtocolError(
                .outOfRange, member: name, "member \"\(name)\" is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    func integer(_ key: String, _ range: ClosedRange<Int64>) throws(AetherProtocolError) -> Int64 {
        try Self.integer(try required(key), range, name: name(key))
    }

    func int(_ key: String, _ range: ClosedRange<Int>) throws(AetherProtocolError) -> Int {
        Int(try integer(key, Int64(range.lowerBound)...Int64(range.upperBound)))
    }

    func string(_ key: String, maximumBytes: Int) throws(AetherProtocolError) -> String {
        try string(required(key), key, maximumBytes: maximumBytes)
    }

    func optionalString(_ key: String, maximumBytes: Int) throws(AetherProtocolError) -> String? {
        guard let value = optional(key) else { return nil }
        return try string(value, key, maximumBytes: maximumBytes)
    }

    private func string(_ value: JSONValue, _ key: String, maximumBytes: Int) throws(AetherProtocolError) -> String {
        guard case .string(let text) = value else { throw wrongType(key, "a string") }
        guard text.utf8.count <= maximumBytes else {
            throw AetherProtocolError(
                .outOfRange, member: name(key), "member \"\(name(key))\" is longer than \(maximumBytes) bytes")
        }
        return text
    }

    /// A 64-digit lowercase hex SHA-256 value.
    func digest(_ key: String) throws(AetherProtocolError) -> Digest32 {
        try Self.digest(try required(key), name: name(key))
    }

    static func digest(_ value: JSONValue, name: String) throws(AetherProtocolError) -> Digest32 {
        guard case .string(let text) = value else {
            throw AetherProtocolError(.wrongType, member: name, "member \"\(name)\" is not a string")
        }
        guard text.utf8.count == 64, let digest = try? Digest32(hex: text), digest.hex == text else {
            throw AetherProtocolError(.malformed, member: name, "member \"\(name)\" is not 64 lowercase hex digits")
        }
        return digest
    }

    /// Standard base64 with padding, decoding to at most `maximumBytes` bytes.
    func base64(_ key: String, maximumBytes: Int) throws(AetherProtocolError) -> [UInt8] {
        try Self.base64(try required(key), name: name(key), maximumBytes: maximumBytes)
    }

    static func base64(_ value: JSONValue, name: String, maximumBytes: Int) throws(AetherProtocolError) -> [UInt8] {
        guard case .string(let text) = value else {
            throw AetherProtocolError(.wrongType, member: name, "member \"\(name)\" is not a string")
        }
        guard text.utf8.count <= (maximumBytes + 2) / 3 * 4 else {
            throw AetherProtocolError(
                .outOfRange, member: name, "member \"\(name)\" is longer than \(maximumBytes) bytes")
        }
        guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else {
            throw AetherProtocolError(.malformed, member: name, "member \"\(name)\" is not canonical base64")
        }
        return Array(data)
    }

    static func base64Value(_ bytes: [UInt8]) -> JSONValue { .string(Data(bytes).base64EncodedString()) }
}
