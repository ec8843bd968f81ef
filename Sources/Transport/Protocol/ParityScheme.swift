/// The parity of an upload (`docs/PROTOCOL.md` section 3.1): `data` data chunks per group and `parity` parity
/// shards per group of code `code` (`rs8`). Group `g` holds chunks `g * data ..< g * data + data`.
public struct ParityScheme: Sendable, Hashable {
    /// The code's name; `rs8` is the only one defined.
    public var code: String
    /// Data chunks per group (1 ... 255).
    public var data: Int
    /// Parity shards per group (1 ... 255, `data + parity <= 256`).
    public var parity: Int

    /// The codes this code knows.
    public static let knownCodes: Set<String> = ["rs8"]

    /// A scheme; `validate()` checks it.
    public init(code: String = "rs8", data: Int, parity: Int) {
        self.code = code
        self.data = data
        self.parity = parity
    }

    /// The number of groups for `chunks` data chunks.
    public func groups(chunks: Int) -> Int { (chunks + data - 1) / data }

    /// The data chunk indices of `group`.
    public func chunks(ofGroup group: Int, chunks: Int) -> Range<Int> {
        min(group * data, chunks)..<min(group * data + data, chunks)
    }

    /// Checks the ranges; `path` prefixes the member names in errors.
    package func validate(path: String = "parity") throws(AetherProtocolError) {
        guard Self.knownCodes.contains(code) else {
            throw AetherProtocolError(.outOfRange, member: path + ".code", "parity code is not one of rs8")
        }
        guard (1...255).contains(data) else {
            throw AetherProtocolError(.outOfRange, member: path + ".data", "parity data is outside 1...255")
        }
        guard (1...255).contains(parity) else {
            throw AetherProtocolError(.outOfRange, member: path + ".parity", "parity parity is outside 1...255")
        }
        guard data + parity <= 256 else {
            throw AetherProtocolError(.inconsistent, member: path + ".parity", "data + parity is over 256")
        }
    }

    static func read(_ reader: JSONObjectReader) throws(AetherProtocolError) -> ParityScheme {
        let scheme = ParityScheme(
            code: try reader.string("code", maximumBytes: 16), data: try reader.int("data", 1...255),
            parity: try reader.int("parity", 1...255))
        try scheme.validate(path: reader.path)
        return scheme
    }

    var jsonMembers: [String: JSONValue] {
        ["code": .string(code), "data": .integer(data), "parity": .integer(parity)]
    }
}
