import AetherIO

/// The members of one native Structured Fields Dictionary header, with typed accessors that name the member in
/// the error they throw. Inner lists are refused (no native field has one).
struct AetherHeaderMembers {
    let field: String
    private(set) var items: [String: StructuredField.Item] = [:]
    private(set) var order: [String] = []
    /// Members whose value is an inner list: an error only when a known member is one.
    private(set) var lists: Set<String> = []
    /// The items of those inner lists (a run's per-chunk digests).
    private(set) var listItems: [String: [StructuredField.Item]] = [:]

    init(_ value: String, field: String) throws(AetherProtocolError) {
        self.field = field
        guard value.utf8.count <= StructuredField.maximumLength else {
            throw AetherProtocolError(.tooLarge, "\(field) is longer than \(StructuredField.maximumLength) bytes")
        }
        guard let members = StructuredField.dictionary(value) else {
            throw AetherProtocolError(.malformed, "\(field) is not a Structured Fields Dictionary")
        }
        for member in members {
            order.append(member.key)
            switch member.value {
            case .item(let item): items[member.key] = item
            case .innerList(let list):
                lists.insert(member.key)
                listItems[member.key] = list
            }
        }
    }

    func has(_ key: String) -> Bool { items[key] != nil || lists.contains(key) }

    func refuseUnknown(_ known: Set<String>) throws(AetherProtocolError) {
        for key in order where !known.contains(key) {
            throw AetherProtocolError(.unknownMember, member: key, "\(field) has an unknown member \(key)")
        }
    }

    func required(_ key: String) throws(AetherProtocolError) -> StructuredField.Item {
        try refuseList(key)
        guard let item = items[key] else {
            throw AetherProtocolError(.missingMember, member: key, "\(field) has no \(key)")
        }
        return item
    }

    func integer(_ key: String, _ range: ClosedRange<Int64>) throws(AetherProtocolError) -> Int64 {
        guard case .integer(let value) = try required(key) else {
            throw AetherProtocolError(.wrongType, member: key, "\(field) member \(key) is not an Integer")
        }
        guard range.contains(value) else {
            throw AetherProtocolError(
                .outOfRange, member: key, "\(field) member \(key) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    private func refuseList(_ key: String) throws(AetherProtocolError) {
        if lists.contains(key) {
            throw AetherProtocolError(.wrongType, member: key, "\(field) member \(key) is a list")
        }
    }

    func bytes(_ key: String, count: Int) throws(AetherProtocolError) -> [UInt8] {
        guard case .bytes(let bytes) = try required(key) else {
            throw AetherProtocolError(.wrongType, member: key, "\(field) member \(key) is not a Byte Sequence")
        }
        guard bytes.count == count else {
            throw AetherProtocolError(.outOfRange, member: key, "\(field) member \(key) is not \(count) bytes")
        }
        return bytes
    }

    func digest(_ key: String) throws(AetherProtocolError) -> Digest32 {
        let bytes = try bytes(key, count: 32)
        guard let digest = try? Digest32(bytes: bytes) else {
            throw AetherProtocolError(.outOfRange, member: key, "\(field) member \(key) is not 32 bytes")
        }
        return digest
    }

    /// A Boolean; absent is false.
    func boolean(_ key: String) throws(AetherProtocolError) -> Bool {
        try refuseList(key)
        guard let item = items[key] else { return false }
        guard case .boolean(let value) = item else {
            throw AetherProtocolError(.wrongType, member: key, "\(field) member \(key) is not a Boolean")
        }
        return value
    }

    /// A String; absent is nil.
    func string(_ key: String) throws(AetherProtocolError) -> String? {
        try refuseList(key)
        guard let item = items[key] else { return nil }
        guard case .string(let value) = item else {
            throw AetherProtocolError(.wrongType, member: key, "\(field) member \(key) is not a String")
        }
        return value
    }
}
