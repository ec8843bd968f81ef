/// Message 2 payload `0x51`: the hello timestamp is too far ahead of the host clock.
/// Carries the host's time so the client can correct its offset and retry once. 9 bytes.
public struct TooNew: Sendable, Hashable {
    /// Payload kind byte.
    public static let kind: UInt8 = 0x51
    /// Host time, ms since the Unix epoch; non-zero.
    public let hostTime: UInt64

    /// A TooNew answer; a zero host time is `.malformedMessage`.
    public init(hostTime: UInt64) throws(SecurityError) {
        guard hostTime != 0 else { throw SecurityError(.malformedMessage, "too new: host time is zero") }
        self.hostTime = hostTime
    }

    /// Parses exactly 9 bytes (kind included).
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> TooNew {
        try TooNew(hostTime: HostTimeRefusal.parse(bytes, kind: kind, structure: "too new"))
    }

    /// The 9-byte encoding.
    public func encoded() -> [UInt8] { HostTimeRefusal.encode(kind: Self.kind, hostTime: hostTime) }
}
