/// Why a BYE closes a session (its 1-byte body).
public enum ByeReason: UInt8, Sendable, Hashable, CaseIterable {
    /// A plain close.
    case closed = 0x00
    /// A newer session replaced this one.
    case superseded = 0x01
    /// The age or counter limit was reached.
    case limitReached = 0x02
    /// The key was forgotten.
    case keyForgotten = 0x03
}
