import FoundationEssentials

/// The parts of HTTP Structured Field Values (RFC 9651) the IETF resumable upload fields and the native `aether/1`
/// fields (`Aether-Chunk`, `Aether-Capabilities`, ...) use: Items (Integer,
/// Decimal, String, Token, Byte Sequence, Boolean) with parameters, and Dictionaries. Parsing follows RFC 9651
/// section 4.2: any failure fails the whole field, which the caller then ignores (nil). Parameters are parsed
/// and dropped; inner lists are parsed and kept only as "an inner list".
package enum StructuredField {
    /// A bare item.
    package enum Item: Equatable, Sendable {
        case integer(Int64)
        case decimal(Double)
        case string(String)
        case token(String)
        case bytes([UInt8])
        case boolean(Bool)
    }

    /// A Dictionary member's value.
    package enum Member: Equatable, Sendable {
        case item(Item)
        case innerList([Item])
    }

    /// The longest field value parsed; longer ones fail (a server that sends more is not speaking this protocol).
    package static let maximumLength = 8192

    /// An Item field value (section 4.2.3), or nil when it does not parse.
    package static func item(_ text: String) -> Item? {
        guard text.utf8.count <= maximumLength else { return nil }
        var parser = Parser(Array(text.utf8))
        parser.skipSP()
        guard let item = parser.item(), parser.parameters() else { return nil }
        parser.skipSP()
        return parser.atEnd ? item : nil
    }

    /// A Dictionary field value (section 4.2.2) in order, or nil when it does not parse. A repeated key keeps
    /// its last value in the first key's position, as section 4.2.2 says.
    package static func dictionary(_ text: String) -> [(key: String, value: Member)]? {
        guard text.utf8.count <= maximumLength else { return nil }
        var parser = Parser(Array(text.utf8))
        var members: [(key: String, value: Member)] = []
        parser.skipSP()
        if parser.atEnd { return members }
        while true {
            guard let key = parser.key() else { return nil }
            let value: Member
            if parser.peek == UInt8(ascii: "=") {
                parser.advance()
                if parser.peek == UInt8(ascii: "(") {
                    guard let list = parser.innerList() else { return nil }
                    value = .innerList(list)
                } else {
                    guard let item = parser.item(), parser.parameters() else { return nil }
                    value = .item(item)
                }
            } else {
                guard parser.parameters() else { return nil }
                value = .item(.boolean(true))
            }
            if let index = members.firstIndex(where: { $0.key == key }) {
                members[index].value = value
            } else {
                members.append((key, value))
            }
            parser.skipOWS()
            if parser.atEnd { return members }
            guard parser.peek == UInt8(ascii: ",") else { return nil }
            parser.advance()
            parser.skipOWS()
            if parser.atEnd { return nil }
        }
    }

    /// `?1` or `?0` (section 4.1.9).
    package static func serialize(_ value: Bool) -> String { value ? "?1" : "?0" }

    /// A byte sequence `:base64:` (section 4.1.8).
    package static func serialize(_ bytes: [UInt8]) -> String { ":" + Data(bytes).base64EncodedString() + ":" }

    /// An Integer (section 4.1.4); nil outside the 15-digit range.
    package static func serialize(_ value: Int64) -> String? {
        abs(value) <= 999_999_999_999_999 ? String(value) : nil
    }

    /// A String (section 4.1.6); nil when it holds a character outside printable ASCII.
    static func serialize(string: String) -> String? {
        var out = "\""
        for byte in string.utf8 {
            guard byte >= 0x20, byte <= 0x7E else { return nil }
            if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { out += "\\" }
            out.unicodeScalars.append(Unicode.Scalar(byte))
        }
        return out + "\""
    }

    /// A bare Item (section 4.1.3); nil when the value cannot be serialized (an Integer past 15 digits, a String
    /// outside printable ASCII, a Token or Decimal, which the native fields never send).
    static func serialize(item: Item) -> String? {
        switch item {
        case .integer(let value): serialize(value)
        case .string(let text): serialize(string: text)
        case .bytes(let bytes): serialize(bytes)
        case .boolean(let value): serialize(value)
        case .token, .decimal: nil
        }
    }

    /// A Dictionary of bare items in the given order (section 4.1.2): `key=value`, a true Boolean as the bare key,
    /// members joined by `", "`. nil when a key or value cannot be serialized.
    static func serialize(dictionary members: [(key: String, value: Item)]) -> String? {
        var parts: [String] = []
        for member in members {
            var key = Parser(Array(member.key.utf8))
            guard key.key() != nil, key.atEnd else { return nil }
            if member.value == .boolean(true) {
                parts.append(member.key)
            } else {
                guard let value = serialize(item: member.value) else { return nil }
                parts.append(member.key + "=" + value)
            }
        }
        return parts.joined(separator: ", ")
    }

    /// RFC 9651 section 4.2 on bytes.
    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[index] }
        mutating func advance() { index += 1 }

        mutating func skipSP() { while peek == 0x20 { advance() } }
        mutating func skipOWS() { while peek == 0x20 || peek == 0x09 { advance() } }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        static func isLowerAlpha(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
        static func isAlpha(_ byte: UInt8) -> Bool { isLowerAlpha(byte | 0x20) }
        static let tcharSymbols = Set("!#$%&'*+-.^_`|~".utf8)

        /// Section 4.2.3.3: lcalpha / "*" then lcalpha / DIGIT / "_" / "-" / "." / "*".
        mutating func key() -> String? {
            guard let first = peek, Self.isLowerAlpha(first) || first == UInt8(ascii: "*") else { return nil }
            let start = index
            while let byte = peek,
                Self.isLowerAlpha(byte) || Self.isDigit(byte) || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "*")
            {
                advance()
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// Section 4.2.3.2, values dropped.
        mutating func parameters() -> Bool {
            while peek == UInt8(ascii: ";") {
                advance()
                skipSP()
                guard key() != nil else { return false }
                if peek == UInt8(ascii: "=") {
                    advance()
                    guard item() != nil else { return false }
                }
            }
            return true
        }

        /// Section 4.2.1.2, with each item's parameters.
        mutating func innerList() -> [Item]? {
            guard peek == UInt8(ascii: "(") else { return nil }
            advance()
            var items: [Item] = []
            while !atEnd {
                skipSP()
                if peek == UInt8(ascii: ")") {
                    advance()
                    return parameters() ? items : nil
                }
                guard let item = item(), parameters() else { return nil }
                items.append(item)
                guard peek == 0x20 || peek == UInt8(ascii: ")") else { return nil }
            }
            return nil
        }

        /// Section 4.2.3.1 (a bare item).
        mutating func item() -> Item? {
            guard let first = peek else { return nil }
            switch first {
            case UInt8(ascii: "-"), 0x30...0x39: return number()
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: ":"): return byteSequence()
            case UInt8(ascii: "?"):
                advance()
                defer { advance() }
                switch peek {
                case UInt8(ascii: "1"): return .boolean(true)
                case UInt8(ascii: "0"): return .boolean(false)
                default: return nil
                }
            default:
                guard Self.isAlpha(first) || first == UInt8(ascii: "*") else { return nil }
                return token()
            }
        }

        /// Section 4.2.4.
        mutating func number() -> Item? {
            var negative = false
            if peek == UInt8(ascii: "-") {
                negative = true
                advance()
            }
            guard let first = peek, Self.isDigit(first) else { return nil }
            var digits: [UInt8] = []
            var point: Int?
            while let byte = peek {
                if Self.isDigit(byte) {
                    digits.append(byte)
                } else if byte == UInt8(ascii: "."), point == nil {
                    guard digits.count <= 12 else { return nil }
                    point = digits.count
                } else {
                    break
                }
                advance()
                if digits.count > 15 { return nil }
            }
            if let point {
                let fraction = digits.count - point
                guard fraction >= 1, fraction <= 3 else { return nil }
                let text =
                    String(decoding: digits[..<point], as: UTF8.self) + "."
                    + String(decoding: digits[point...], as: UTF8.self)
                guard let value = Double(text) else { return nil }
                return .decimal(negative ? -value : value)
            }
            guard let value = Int64(String(decoding: digits, as: UTF8.self)) else { return nil }
            return .integer(negative ? -value : value)
        }

        /// Section 4.2.5.
        mutating func string() -> Item? {
            advance()
            var out: [UInt8] = []
            while let byte = peek {
                advance()
                switch byte {
                case UInt8(ascii: "\\"):
                    guard let next = peek, next == UInt8(ascii: "\\") || next == UInt8(ascii: "\"") else { return nil }
                    out.append(next)
                    advance()
                case UInt8(ascii: "\""): return .string(String(decoding: out, as: UTF8.self))
                case 0x20...0x7E: out.append(byte)
                default: return nil
                }
            }
            return nil
        }

        /// Section 4.2.6.
        mutating func token() -> Item? {
            let start = index
            advance()
            while let byte = peek,
                Self.isAlpha(byte) || Self.isDigit(byte) || Self.tcharSymbols.contains(byte)
                    || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/")
            {
                advance()
            }
            return .token(String(decoding: bytes[start..<index], as: UTF8.self))
        }

        /// Section 4.2.7: standard base64 with padding characters allowed.
        mutating func byteSequence() -> Item? {
            advance()
            let start = index
            while let byte = peek, byte != UInt8(ascii: ":") {
                guard
                    Self.isAlpha(byte) || Self.isDigit(byte) || byte == UInt8(ascii: "+")
                        || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
                else { return nil }
                advance()
            }
            guard peek == UInt8(ascii: ":") else { return nil }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            advance()
            var padded = text
            while padded.utf8.count % 4 != 0 { padded += "=" }
            guard let data = Data(base64Encoded: padded) else { return nil }
            return .bytes(Array(data))
        }
    }
}
