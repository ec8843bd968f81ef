/// Message 2 payload `0x53`: the host cannot take the session now; retry after a delay. 5 bytes.
public struct SessionBusy: Sendable, Hashable {
    /// Payload kind byte.
    public static let kind: UInt8 = 0x53
    /// How long to wait before the next attempt (ms, 0 ... 60,000).
    public let retryAfterMilliseconds: UInt32

    /// A busy answer; a delay past 60,000 ms is `.malformedMessage`.
    public init(retryAfterMilliseconds: UInt32) throws(SecurityError) {
        guard SessionWire.retryAfterRange.contains(retryAfterMilliseconds) else {
            throw SecurityError(.malformedMessage, "session busy: retry-after out of range")
        }
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    /// Parses exactly 5 bytes (kind included).
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> SessionBusy {
        var reader = WireReader(bytes, structure: "session busy")
        guard try reader.u8("kind") == kind else { throw reader.failure("wrong kind") }
        let delay = try reader.u32("retry after")
        try reader.finish()
        return try SessionBusy(retryAfterMilliseconds: delay)
    }

    /// The 5-byte encoding.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.kind]
        out.appendBigEndian(retryAfterMilliseconds)
        return out
    }
}
