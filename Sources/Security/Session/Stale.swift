/// Message 2 payload `0x50`: the hello timestamp is too old (or not newer than the last accepted one).
/// Carries the host's time so the client can correct its offset and retry once. 9 bytes.
public struct Stale: Sendable, Hashable {
    /// Payload kind byte.
    public static let kind: UInt8 = 0x50
    /// Host time, ms since the Unix epoch; non-zero.
    public let hostTime: UInt64

    /// A Stale answer; a zero host time is `.malformedMessage`.
    public init(hostTime: UInt64) throws(SecurityError) {
        guard hostTime != 0 else { throw SecurityError(.malformedMessage, "stale: host time is zero") }
        self.hostTime = hostTime
    }

    /// Parses exactly 9 bytes (kind included).
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> Stale {
        try Stale(hostTime: HostTimeRefusal.parse(bytes, kind: kind, structure: "stale"))
    }

    /// The 9-byte encoding.
    public func encoded() -> [UInt8] { HostTimeRefusal.encode(kind: Self.kind, hostTime: hostTime) }
}
