/// Handshake message 1 as a datagram (110 bytes): type, version, attempt id, key id, then the Noise
/// message (`e` and the encrypted hello). Parsing checks the framing only; the hello needs K_dev.
public struct Message1: Sendable, Hashable {
    /// Names the attempt; message 2 echoes it. Non-zero.
    public let attemptID: UInt64
    /// The key the handshake runs under (clear, so the host can find K_dev).
    public let keyID: KeyID
    /// The Noise message (84 bytes).
    public let noiseMessage: [UInt8]

    /// Parses the framing of exactly 110 bytes.
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> Message1 {
        var reader = WireReader(bytes, structure: "message 1")
        guard bytes.count == SessionWire.message1Size else { throw reader.failure("length \(bytes.count), want 110") }
        guard try reader.u8("type") == SessionWire.message1Type else { throw reader.failure("not message 1") }
        guard try reader.u8("version") == SessionWire.version else { throw reader.failure("unknown version") }
        let attemptID = try reader.u64("attempt id")
        guard attemptID != 0 else { throw reader.failure("attempt id is zero") }
        let keyID = try reader.keyID("key id")
        let noise = Array(try reader.take(reader.remaining, "noise message"))
        return Message1(attemptID: attemptID, keyID: keyID, noiseMessage: noise)
    }

    /// The clear header (26 bytes).
    static func header(attemptID: UInt64, keyID: KeyID) -> [UInt8] {
        var out: [UInt8] = [SessionWire.message1Type, SessionWire.version]
        out.appendBigEndian(attemptID)
        out += keyID.bytes
        return out
    }

    /// The Noise prologue: the label, then the clear header.
    static func prologue(attemptID: UInt64, keyID: KeyID) -> [UInt8] {
        SessionWire.prologueLabel + header(attemptID: attemptID, keyID: keyID)
    }

    /// The prologue of this message.
    var prologue: [UInt8] { Self.prologue(attemptID: attemptID, keyID: keyID) }

    /// The 110-byte datagram.
    public func encoded() -> [UInt8] { Self.header(attemptID: attemptID, keyID: keyID) + noiseMessage }
}
