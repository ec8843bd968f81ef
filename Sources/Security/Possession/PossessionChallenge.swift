/// A proof-of-possession challenge (upload-engine v2.2 ProofOfPossession): a UUIDv7 nonce, the verifier's
/// ephemeral X25519 public key, and the questions. Wire form (big-endian):
/// `"APC1" || nonce(16) || verifier key(32) || u8 n || n items`, an item being `0x01` (full hash),
/// `0x02 || u64 offset || u32 length` (range) or `0x03 || u32 index` (Merkle chunk).
public struct PossessionChallenge: Sendable, Hashable {
    /// One question.
    public enum Item: Sendable, Hashable {
        /// HMAC of the whole content.
        case fullHash
        /// HMAC of `length` bytes at `offset`.
        case range(offset: UInt64, length: UInt32)
        /// The inclusion proof of chunk `index` and the HMAC of its bytes.
        case merkleChunk(index: UInt32)
    }

    /// The challenge nonce; its embedded time is the issue time.
    public let nonce: UUIDv7
    /// The verifier's ephemeral X25519 public key.
    public let verifierKey: X25519.PublicKey
    /// The questions, answered in order.
    public let items: [Item]

    /// Most questions one challenge may carry.
    public static let maximumItemCount = 64
    static let magic: [UInt8] = Array("APC1".utf8)

    /// A challenge; 1...64 items.
    public init(nonce: UUIDv7, verifierKey: X25519.PublicKey, items: [Item]) throws(SecurityError) {
        guard (1...Self.maximumItemCount).contains(items.count) else {
            throw SecurityError(.malformedMessage, "a challenge has 1...\(Self.maximumItemCount) items")
        }
        self.nonce = nonce
        self.verifierKey = verifierKey
        self.items = items
    }

    /// The wire form.
    public var serialized: [UInt8] {
        var out = Self.magic + nonce.bytes + verifierKey.rawRepresentation
        out.append(UInt8(items.count))
        for item in items {
            switch item {
            case .fullHash: out.append(1)
            case .range(let offset, let length):
                out.append(2)
                PossessionWireReader.append(offset, byteCount: 8, to: &out)
                PossessionWireReader.append(UInt64(length), byteCount: 4, to: &out)
            case .merkleChunk(let index):
                out.append(3)
                PossessionWireReader.append(UInt64(index), byteCount: 4, to: &out)
            }
        }
        return out
    }

    /// Parses the wire form strictly.
    public init(serialized bytes: [UInt8]) throws(SecurityError) {
        var reader = PossessionWireReader(bytes)
        guard try reader.take(4) == Self.magic else {
            throw SecurityError(.malformedMessage, "not a proof-of-possession challenge")
        }
        let nonce = try UUIDv7(bytes: reader.take(16))
        let key = try X25519.PublicKey(rawRepresentation: reader.take(32))
        let count = Int(try reader.integer(byteCount: 1))
        var items: [Item] = []
        for _ in 0..<count {
            switch try reader.integer(byteCount: 1) {
            case 1: items.append(.fullHash)
            case 2:
                let offset = try reader.integer(byteCount: 8)
                let length = UInt32(try reader.integer(byteCount: 4))
                items.append(.range(offset: offset, length: length))
            case 3: items.append(.merkleChunk(index: UInt32(try reader.integer(byteCount: 4))))
            default: throw SecurityError(.malformedMessage, "unknown challenge item")
            }
        }
        try reader.finish()
        try self.init(nonce: nonce, verifierKey: key, items: items)
    }
}
