/// Message 2 payload `0x52`: the host will not open sessions under this key any more. 1 byte.
public struct PairAgain: Sendable, Hashable {
    /// Payload kind byte.
    public static let kind: UInt8 = 0x52

    /// The answer (it has no fields).
    public init() {}

    /// Parses exactly the 1-byte payload.
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> PairAgain {
        guard bytes == [kind] else { throw SecurityError(.malformedMessage, "pair again: not the 1-byte payload") }
        return PairAgain()
    }

    /// The 1-byte encoding.
    public func encoded() -> [UInt8] { [Self.kind] }
}
