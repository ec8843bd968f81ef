/// Message 2 payload `0x54`: the host deleted this key. Authenticated by the handshake, so the client
/// deletes it too. 25 bytes.
public struct Tombstone: Sendable, Hashable {
    /// Payload kind byte.
    public static let kind: UInt8 = 0x54
    /// The deleted key (must be the handshake's key).
    public let keyID: KeyID
    /// When the host deleted it (ms since the Unix epoch); non-zero.
    public let retiredAt: UInt64

    /// A tombstone; a zero time is `.malformedMessage`.
    public init(keyID: KeyID, retiredAt: UInt64) throws(SecurityError) {
        guard retiredAt != 0 else { throw SecurityError(.malformedMessage, "tombstone: retired-at is zero") }
        self.keyID = keyID
        self.retiredAt = retiredAt
    }

    /// Parses exactly 25 bytes (kind included).
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> Tombstone {
        var reader = WireReader(bytes, structure: "tombstone")
        guard try reader.u8("kind") == kind else { throw reader.failure("wrong kind") }
        let keyID = try reader.keyID("key id")
        let retiredAt = try reader.u64("retired at")
        try reader.finish()
        return try Tombstone(keyID: keyID, retiredAt: retiredAt)
    }

    /// The 25-byte encoding.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.kind]
        out += keyID.bytes
        out.appendBigEndian(retiredAt)
        return out
    }
}
