/// The message 1 payload (36 bytes): hello version, intent, flags, timestamp, key id, previous session id.
public struct Hello: Sendable, Hashable {
    /// Why the client connects.
    public let intent: HelloIntent
    /// Client time in ms since the Unix epoch (plus the offset learnt from Stale/TooNew); non-zero.
    public let timestamp: UInt64
    /// The key the handshake runs under.
    public let keyID: KeyID
    /// The live session a reconnect replaces (0 for connect).
    public let previousSessionID: UInt64

    /// Validates the intent rules: connect has no previous session, reconnect has one.
    public init(intent: HelloIntent, timestamp: UInt64, keyID: KeyID, previousSessionID: UInt64)
        throws(SecurityError)
    {
        guard timestamp != 0 else { throw SecurityError(.malformedMessage, "hello: timestamp is zero") }
        switch intent {
        case .connect where previousSessionID != 0:
            throw SecurityError(.malformedMessage, "hello: connect names a previous session")
        case .reconnect where previousSessionID == 0:
            throw SecurityError(.malformedMessage, "hello: reconnect without a previous session")
        default: break
        }
        self.intent = intent
        self.timestamp = timestamp
        self.keyID = keyID
        self.previousSessionID = previousSessionID
    }

    /// Parses exactly 36 bytes; anything else is `.malformedMessage`.
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> Hello {
        var reader = WireReader(bytes, structure: "hello")
        guard bytes.count == SessionWire.helloSize else { throw reader.failure("length \(bytes.count), want 36") }
        guard try reader.u8("version") == SessionWire.version else { throw reader.failure("unknown version") }
        guard let intent = HelloIntent(rawValue: try reader.u8("intent")) else {
            throw reader.failure("unknown intent")
        }
        guard try reader.u16("flags") == 0 else { throw reader.failure("reserved flags set") }
        let timestamp = try reader.u64("timestamp")
        let keyID = try reader.keyID("key id")
        let previous = try reader.u64("previous session id")
        try reader.finish()
        return try Hello(intent: intent, timestamp: timestamp, keyID: keyID, previousSessionID: previous)
    }

    /// The 36-byte encoding; `parse(encoded())` returns `self`.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [SessionWire.version, intent.rawValue, 0, 0]
        out.reserveCapacity(SessionWire.helloSize)
        out.appendBigEndian(timestamp)
        out += keyID.bytes
        out.appendBigEndian(previousSessionID)
        return out
    }
}
