/// A domain-separation tag prefixed to hashed messages so that a digest made for one purpose can
/// never be replayed as another (Merkle leaf vs node, commitment link, proof of possession).
///
/// BUG-14: the tags Aether uses are compile-time constants (`static let` below, built from string
/// literals, checked by a test); a tag built at run time is validated and an empty or non-ASCII tag
/// throws `.invalidDomainTag` instead of crashing.
public struct DomainTag: Sendable, Hashable, CustomStringConvertible {
    /// The tag's bytes (printable ASCII).
    public let bytes: [UInt8]

    /// A tag from a string literal: the compile-time path. Literals are checked by
    /// `DomainTagTests` (every constant below) and by `precondition` for a programmer's typo.
    public init(constant: StaticString) {
        let bytes = constant.withUTF8Buffer { unsafe Array($0) }
        precondition(Self.isValid(bytes), "domain tag literals must be non-empty printable ASCII")
        self.bytes = bytes
    }

    /// A tag built at run time: empty, non-ASCII, control characters or over 255 bytes throw.
    public init(validating text: String) throws(IOError) {
        let bytes = Array(text.utf8)
        guard Self.isValid(bytes) else {
            throw IOError(
                .invalidDomainTag,
                "domain tag must be 1...255 printable ASCII bytes (got \(bytes.count) bytes\(bytes.isEmpty ? "" : ", some invalid"))"
            )
        }
        self.bytes = bytes
    }

    static func isValid(_ bytes: [UInt8]) -> Bool {
        !bytes.isEmpty && bytes.count <= 255 && bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// The tag as text.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// SHA-256 of the tag's length byte, the tag, then `message`: unambiguous for any tag set.
    public func hash(_ message: UnsafeRawBufferPointer) -> Digest32 {
        var hasher = SHA256()
        hasher.update([UInt8(bytes.count)] + bytes)
        unsafe hasher.update(message)
        return hasher.finalize()
    }

    /// SHA-256 of the length-prefixed tag, then `message`.
    public func hash(_ message: some Sequence<UInt8>) -> Digest32 {
        let array = Array(message)
        return unsafe array.withUnsafeBytes { unsafe hash($0) }
    }

    /// Merkle leaf hashing (RFC 6962 style separation of leaves from nodes).
    public static let merkleLeaf = DomainTag(constant: "aether/merkle-leaf/v1")
    /// Merkle interior node hashing.
    public static let merkleNode = DomainTag(constant: "aether/merkle-node/v1")
    /// Chunk commitment chain links.
    public static let commitmentLink = DomainTag(constant: "aether/commitment-link/v1")
    /// Proof of possession challenges.
    public static let proofOfPossession = DomainTag(constant: "aether/proof-of-possession/v1")
    /// Chunk idempotency keys.
    public static let idempotencyKey = DomainTag(constant: "aether/idempotency-key/v1")
    /// Byzantine spot checks, version 2: the message of every answer starts with it (`docs/PROTOCOL.md` 3.6).
    public static let byzantineChallenge = DomainTag(constant: "aether/byzantine-challenge/v2")
    /// Every constant tag, for the test that checks them and their distinctness.
    public static let allConstants: [DomainTag] = [
        merkleLeaf, merkleNode, commitmentLink, proofOfPossession, idempotencyKey, byzantineChallenge,
    ]
}
