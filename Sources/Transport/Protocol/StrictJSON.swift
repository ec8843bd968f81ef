/// The JSON the native protocol's documents are made of (RFC 8259), parsed strictly and written canonically
/// (`docs/PROTOCOL.md` conventions): duplicate keys, trailing bytes, lone surrogates, control characters in
/// strings and nesting deeper than `maximumDepth` are refused; output has keys sorted by their UTF-8 bytes, no
/// insignificant whitespace, and strings escaped as RFC 8785 does. Numbers keep their literal text, so that
/// an integer member can tell a fraction (wrong type) from a too-large integer (out of range).
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The deepest nesting accepted (the documents nest three levels).
    static let maximumDepth = 8

    /// An integer value.
    static func integer(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }

    /// Parses `bytes` as one JSON value after checking it is at most `limit` bytes long.
    static func parse(_ bytes: some Collection<UInt8>, limit: Int) throws(AetherProtocolError) -> JSONValue {
        guard bytes.count <= limit else {
            throw AetherProtocolError(.tooLarge, "the document is \(bytes.count) bytes, over the \(limit)-byte limit")
        }
        var parser = JSONParser(Array(bytes))
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.atEnd else { throw parser.fail("bytes after the document") }
        return value
    }

    /// The canonical serialization.
    var canonicalBytes: [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let value): out += Array((value ? "true" : "false").utf8)
        case .number(let text): out += Array(text.utf8)
        case .string(let text): Self.writeString(text, into: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let keys = members.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                members[key]?.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x00..<0x20:
                out += Array("\\u00".utf8)
                out += [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// RFC 8259 on bytes, refusing what `JSONValue` says it refuses.
private struct JSONParser {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }
    var peek: UInt8? { atEnd ? nil : bytes[index] }

    func fail(_ what: String) -> AetherProtocolError {
        AetherProtocolError(.malformed, "not JSON: \(what) at byte \(index)")
    }

    mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    mutating func expect(_ literal: String) throws(AetherProtocolError) {
        for byte in literal.utf8 {
            guard peek == byte else { throw fail("a misspelt literal") }
            index += 1
        }
    }

    mutating func value(depth: Int) throws(AetherProtocolError) -> JSONValue {
        guard depth <= JSONValue.maximumDepth else { throw fail("nesting deeper than \(JSONValue.maximumDepth)") }
        guard let byte = peek else { throw fail("the end of the input where a value belongs") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), 0x30...0x39: return try number()
        default: throw fail("an unexpected character")
        }
    }

    mutating func object(depth: Int) throws(AetherProtocolError) -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\"") else { throw fail("a member name that is not a string") }
            let key = try string()
            guard members[key] == nil else {
                throw AetherProtocolError(.malformed, member: key, "member \"\(key)\" appears twice")
            }
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw fail("a missing ':'") }
            index += 1
            skipWhitespace()
            members[key] = try value(depth: depth + 1)
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw fail("a missing ',' or '}'")
            }
        }
    }

    mutating func array(depth: Int) throws(AetherProtocolError) -> JSONValue {
        index += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return .array(values)
        }
        while true {
            skipWhitespace()
            values.append(try value(depth: depth + 1))
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(values)
            default: throw fail("a missing ',' or ']'")
            }
        }
    }

    mutating func number() throws(AetherProtocolError) -> JSONValue {
        let start = index
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, (0x30...0x39).contains(first) else { throw fail("a number without digits") }
        index += 1
        if first != 0x30 { while let byte = peek, (0x30...0x39).contains(byte) { index += 1 } }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard let byte = peek, (0x30...0x39).contains(byte) else { throw fail("a fraction without digits") }
            while let byte = peek, (0x30...0x39).contains(byte) { index += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let byte = peek, (0x30...0x39).contains(byte) else { throw fail("an exponent without digits") }
            while let byte = peek, (0x30...0x39).contains(byte) { index += 1 }
        }
        if let byte = peek, (0x30...0x39).contains(byte) { throw fail("a number with a leading zero") }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    mutating func hex4() throws(AetherProtocolError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek else { throw fail("a short \\u escape") }
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw fail("a bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func string() throws(AetherProtocolError) -> String {
        index += 1
        var out: [UInt8] = []
        while let byte = peek {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: out, as: UTF8.self) else {
                    throw fail("a string that is not UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                guard let escape = peek else { break }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        try expect("\\u")
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("a lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("a lone surrogate") }
                    out += Array(String(Character(unicode)).utf8)
                default: throw fail("a bad escape")
                }
            case 0x00..<0x20: throw fail("a control character in a string")
            default: out.append(byte)
            }
        }
        throw fail("an unterminated string")
    }
}
