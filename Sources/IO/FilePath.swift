/// A file system path as the bytes the kernel sees, from `argv` to the system call.
///
/// Linux paths are byte strings: any byte but NUL, UTF-8 or not. `String` would repair invalid UTF-8
/// (U+FFFD), so a name such as `"caf\u{e9}"` in Latin-1 (`63 61 66 e9`) would open a different file.
/// `FilePath` keeps the bytes and only turns them into text for messages, losslessly: valid UTF-8 is
/// shown as is, every other byte as `\xHH`, and a backslash as `\\`.
///
/// ```swift
/// let path = try FilePath(bytes: [0x2f, 0x74, 0x6d, 0x70, 0x2f, 0xff])   // "/tmp/\xFF"
/// let file = try GuardedFile(path: path)
/// ```
public struct FilePath: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The path's bytes, without a terminating NUL.
    public let bytes: [UInt8]

    /// The UTF-8 bytes of `string` (lossless: a Swift string is always valid Unicode).
    public init(_ string: String) {
        bytes = Array(string.utf8.prefix { $0 != 0 })
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// A path from raw bytes; a NUL byte (which no path can hold) is `.invalidArgument`.
    public init(bytes: [UInt8]) throws(IOError) {
        guard !bytes.contains(0) else {
            throw IOError(.invalidArgument, "a path cannot contain a NUL byte")
        }
        self.bytes = bytes
    }

    /// Bytes already known to hold no NUL.
    init(trusted bytes: [UInt8]) { self.bytes = bytes }

    /// Whether the path has no bytes.
    public var isEmpty: Bool { bytes.isEmpty }

    /// The path as text for messages: valid UTF-8 as is, other bytes as `\xHH`, `\` as `\\`.
    public var description: String {
        var text = ""
        var index = 0
        while index < bytes.count {
            let length = Self.validSequenceLength(bytes, at: index)
            if length == 0 {
                text += "\\x" + Hex.encode([bytes[index]]).uppercased()
                index += 1
            } else if bytes[index] == UInt8(ascii: "\\") {
                text += "\\\\"
                index += 1
            } else {
                text += String(decoding: bytes[index..<(index + length)], as: UTF8.self)
                index += length
            }
        }
        return text
    }

    /// Whether the bytes are valid UTF-8 (so `description` shows them unchanged, apart from `\`).
    public var isValidUTF8: Bool {
        var index = 0
        while index < bytes.count {
            let length = Self.validSequenceLength(bytes, at: index)
            guard length > 0 else { return false }
            index += length
        }
        return true
    }

    /// `self` + "/" + `component` (no slash doubled).
    public func appending(_ component: String) -> FilePath {
        appending(FilePath(component))
    }

    /// `self` + "/" + `component` (no slash doubled).
    public func appending(_ component: FilePath) -> FilePath {
        if bytes.isEmpty { return component }
        if bytes.last == UInt8(ascii: "/") { return FilePath(trusted: bytes + component.bytes) }
        return FilePath(trusted: bytes + [UInt8(ascii: "/")] + component.bytes)
    }

    /// The directory part: "." when there is no slash, "/" for a file in the root.
    public var directory: FilePath {
        var end = bytes.count
        while end > 1, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) else { return FilePath(".") }
        var cut = slash
        while cut > 0, bytes[cut - 1] == UInt8(ascii: "/") { cut -= 1 }
        return cut == 0 ? FilePath("/") : FilePath(trusted: Array(bytes[..<cut]))
    }

    /// The last component (the name), without trailing slashes.
    public var lastComponent: FilePath {
        var end = bytes.count
        while end > 1, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        let start = bytes[..<end].lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        return FilePath(trusted: Array(bytes[start..<end]))
    }

    /// Calls `body` with the path as a NUL-terminated C string, for a system call.
    public func withCString<R, E: Error>(_ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        var terminated = bytes.map { CChar(bitPattern: $0) }
        terminated.append(0)
        return try unsafe terminated.withUnsafeBufferPointer { (buffer) throws(E) -> R in
            try unsafe body(buffer.baseAddress!)
        }
    }

    // The length of the valid UTF-8 sequence starting at `index`, or 0 when it is not valid there
    // (overlong forms, surrogates and values past U+10FFFF are invalid, as in the Unicode standard).
    private static func validSequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let first = bytes[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch first {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: return 0
        }
        guard index + length <= bytes.count else { return 0 }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            let (lower, upper) = offset == 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
            guard byte >= lower, byte <= upper else { return 0 }
        }
        return length
    }
}
