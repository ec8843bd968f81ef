/// An upload's id: 128 bits from the CSPRNG in lowercase base32 without padding (26 characters).
///
/// The validating initialiser refuses anything else, so an id taken from a URL can name a file under the store
/// and nothing more (no `/`, `.`, or other byte reaches a path).
public struct UploadID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 26-character text.
    public let rawValue: String

    /// Characters in an id.
    public static let length = 26
    private static let alphabet: [UInt8] = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// Validates `text`: exactly 26 characters of `a-z2-7` whose last one carries no bits past 128 (the
    /// encoding is canonical). Anything else is `.notFound` (no upload can have that name).
    public init(_ text: some StringProtocol) throws(ReceiverError) {
        let bytes = Array(text.utf8)
        guard bytes.count == Self.length, bytes.allSatisfy({ Self.alphabet.contains($0) }) else {
            throw ReceiverError(.notFound, "not an upload id")
        }
        // 26 * 5 = 130 bits: the last character's two low bits must be zero.
        guard let last = Self.alphabet.firstIndex(of: bytes[Self.length - 1]), last & 0b11 == 0 else {
            throw ReceiverError(.notFound, "not an upload id")
        }
        rawValue = String(decoding: bytes, as: UTF8.self)
    }

    /// The id of 16 random bytes (`bytes.count` must be 16).
    init(randomBytes bytes: [UInt8]) {
        precondition(bytes.count == 16, "an upload id takes 16 random bytes")
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(Self.alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(Self.alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        rawValue = String(decoding: out, as: UTF8.self)
    }

    public var description: String { rawValue }

    public static func < (lhs: UploadID, rhs: UploadID) -> Bool { lhs.rawValue < rhs.rawValue }
}
