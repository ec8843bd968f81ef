/// An ordered list of HTTP header fields. Names compare case-insensitively (ASCII); order and repeats are kept.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// One field as sent or received.
    public struct Field: Sendable, Equatable {
        /// The field name as written (HTTP/2 delivers it in lower case).
        public let name: String
        /// The field value without surrounding whitespace.
        public let value: String

        /// A field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field] = []

    /// No fields.
    public init() {}

    /// Fields from name/value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        for (name, value) in pairs { add(name, value) }
    }

    /// Fields from a literal, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// Appends a field (an existing one of the same name is kept).
    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field named `name`, then appends one.
    public mutating func replace(_ name: String, _ value: String) {
        fields.removeAll { Self.equalNames($0.name, name) }
        add(name, value)
    }

    /// The first value of `name`, or nil.
    public subscript(_ name: String) -> String? {
        fields.first { Self.equalNames($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.equalNames($0.name, name) }.map(\.value)
    }

    /// True when a field named `name` is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Number of fields.
    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// ASCII case-insensitive comparison of two field names.
    static func equalNames(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        return zip(left, right).allSatisfy { lowercase($0) == lowercase($1) }
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// True when `name` is a token (RFC 9110 section 5.6.2) and `value` has no CR, LF or NUL: what may be sent.
    static func isSendable(name: String, value: String) -> Bool {
        let tokenSymbols: Set<UInt8> = Set("!#$%&'*+-.^_`|~".utf8)
        guard !name.isEmpty,
            name.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                    || tokenSymbols.contains(byte)
            })
        else { return false }
        return !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }
}
