/// Every message 2 payload: the Accept or one of the refusals, chosen by the kind byte.
public enum Message2Payload: Sendable, Hashable {
    /// `0x01`: the session is open.
    case accept(Accept)
    /// `0x50`: the hello timestamp is too old.
    case stale(Stale)
    /// `0x51`: the hello timestamp is too new.
    case tooNew(TooNew)
    /// `0x52`: stop using this key; pair again.
    case pairAgain(PairAgain)
    /// `0x53`: busy, retry later.
    case sessionBusy(SessionBusy)
    /// `0x54`: the key was deleted on the host.
    case tombstone(Tombstone)

    /// Parses a decrypted message 2 payload. Empty, unknown kinds and wrong sizes are `.malformedMessage`.
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> Message2Payload {
        guard let kind = bytes.first else { throw SecurityError(.malformedMessage, "message 2 payload: empty") }
        switch kind {
        case Accept.kind: return .accept(try Accept.parse(bytes))
        case Stale.kind: return .stale(try Stale.parse(bytes))
        case TooNew.kind: return .tooNew(try TooNew.parse(bytes))
        case PairAgain.kind: return .pairAgain(try PairAgain.parse(bytes))
        case SessionBusy.kind: return .sessionBusy(try SessionBusy.parse(bytes))
        case Tombstone.kind: return .tombstone(try Tombstone.parse(bytes))
        default: throw SecurityError(.malformedMessage, "message 2 payload: unknown kind")
        }
    }

    /// The encoding; `parse(encoded())` returns `self`.
    public func encoded() -> [UInt8] {
        switch self {
        case .accept(let value): value.encoded()
        case .stale(let value): value.encoded()
        case .tooNew(let value): value.encoded()
        case .pairAgain(let value): value.encoded()
        case .sessionBusy(let value): value.encoded()
        case .tombstone(let value): value.encoded()
        }
    }
}
