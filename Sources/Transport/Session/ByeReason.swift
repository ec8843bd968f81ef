/// Why a sealed BYE closes a session (`0x41`, secure-session doc section 3.2).
public enum ByeReason: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// The sender closed the session.
    case closed = 0x00
    /// A newer session replaced it.
    case superseded = 0x01
    /// The age or counter limit was reached.
    case limitReached = 0x02
    /// The sender forgot the key.
    case keyForgotten = 0x03

    public var description: String {
        switch self {
        case .closed: "closed"
        case .superseded: "superseded"
        case .limitReached: "limit reached"
        case .keyForgotten: "key forgotten"
        }
    }
}
