/// Handshake message 2 as a datagram (58 ... 427 bytes): type, version, attempt id, then the Noise
/// message (`e` and the encrypted payload). Parsing checks the framing only.
public struct Message2: Sendable, Hashable {
    /// The attempt it answers (copied from message 1).
    public let attemptID: UInt64
    /// The Noise message (48 ... 417 bytes).
    public let noiseMessage: [UInt8]

    /// Parses the framing.
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> Message2 {
        var reader = WireReader(bytes, structure: "message 2")
        guard (SessionWire.message2MinSize...SessionWire.message2MaxSize).contains(bytes.count) else {
            throw reader.failure("length \(bytes.count) outside 58 ... 427")
        }
        guard try reader.u8("type") == SessionWire.message2Type else { throw reader.failure("not message 2") }
        guard try reader.u8("version") == SessionWire.version else { throw reader.failure("unknown version") }
        let attemptID = try reader.u64("attempt id")
        guard attemptID != 0 else { throw reader.failure("attempt id is zero") }
        return Message2(attemptID: attemptID, noiseMessage: Array(try reader.take(reader.remaining, "noise message")))
    }

    /// The datagram.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [SessionWire.message2Type, SessionWire.version]
        out.appendBigEndian(attemptID)
        return out + noiseMessage
    }
}
