/// The prover's answer: `"APS1" || nonce(16) || prover ephemeral X25519 key(32) || AES-256-GCM(nonce || ct || tag)`.
/// The AEAD's associated data is `"APS1" || nonce || prover key || verifier key`.
public struct PossessionResponse: Sendable, Hashable {
    /// The challenge nonce this answers.
    public let nonce: UUIDv7
    /// The prover's ephemeral X25519 public key.
    public let proverKey: X25519.PublicKey
    /// The sealed answers (12-byte nonce, ciphertext, 16-byte tag).
    public let sealedAnswers: [UInt8]

    static let magic: [UInt8] = Array("APS1".utf8)
    /// Largest sealed body accepted (64 items with the deepest Merkle proofs fit well within it).
    public static let maximumSealedByteCount = 256 * 1024

    /// A response.
    public init(nonce: UUIDv7, proverKey: X25519.PublicKey, sealedAnswers: [UInt8]) throws(SecurityError) {
        guard (28...Self.maximumSealedByteCount).contains(sealedAnswers.count) else {
            throw SecurityError(.malformedMessage, "sealed answers are 28...\(Self.maximumSealedByteCount) bytes")
        }
        self.nonce = nonce
        self.proverKey = proverKey
        self.sealedAnswers = sealedAnswers
    }

    /// The wire form.
    public var serialized: [UInt8] { Self.magic + nonce.bytes + proverKey.rawRepresentation + sealedAnswers }

    /// Parses the wire form.
    public init(serialized bytes: [UInt8]) throws(SecurityError) {
        var reader = PossessionWireReader(bytes)
        guard try reader.take(4) == Self.magic else {
            throw SecurityError(.malformedMessage, "not a proof-of-possession response")
        }
        let nonce = try UUIDv7(bytes: reader.take(16))
        let key = try X25519.PublicKey(rawRepresentation: reader.take(32))
        try self.init(nonce: nonce, proverKey: key, sealedAnswers: Array(bytes.dropFirst(52)))
    }

    /// The associated data of the sealed answers.
    static func associatedData(nonce: UUIDv7, proverKey: X25519.PublicKey, verifierKey: X25519.PublicKey) -> [UInt8] {
        magic + nonce.bytes + proverKey.rawRepresentation + verifierKey.rawRepresentation
    }
}
