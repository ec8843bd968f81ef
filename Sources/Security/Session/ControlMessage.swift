/// A known control record (inner types `0x40 ... 0x45`) and its body.
public enum ControlMessage: Sendable, Hashable {
    /// `0x40`, empty body: the sender holds the session keys (client → host after Accept).
    case confirm
    /// `0x41`, 1-byte reason: the sender closes the session.
    case bye(ByeReason)
    /// `0x42`, u32 query id: asks the peer for its counts.
    case countsQuery(queryID: UInt32)
    /// `0x43`: the peer's counts.
    case countsAnswer(CountsAnswer)
    /// `0x44`: the host's slot status changed.
    case slotStatus(SlotStatus)
    /// `0x45`, empty body: keeps the session live.
    case keepAlive

    /// Inner type of Confirm.
    public static let confirmType: UInt8 = 0x40
    /// Inner type of BYE.
    public static let byeType: UInt8 = 0x41
    /// Inner type of a counts query.
    public static let countsQueryType: UInt8 = 0x42
    /// Inner type of a counts answer.
    public static let countsAnswerType: UInt8 = 0x43
    /// Inner type of a slot status.
    public static let slotStatusType: UInt8 = 0x44
    /// Inner type of a keep-alive.
    public static let keepAliveType: UInt8 = 0x45

    /// The record inner type.
    public var innerType: UInt8 {
        switch self {
        case .confirm: Self.confirmType
        case .bye: Self.byeType
        case .countsQuery: Self.countsQueryType
        case .countsAnswer: Self.countsAnswerType
        case .slotStatus: Self.slotStatusType
        case .keepAlive: Self.keepAliveType
        }
    }

    /// Parses the body of a control record of `innerType`. An unknown type or a body that does not
    /// parse is `.malformedMessage`.
    public static func parse(innerType: UInt8, body: [UInt8]) throws(SecurityError) -> ControlMessage {
        switch innerType {
        case confirmType:
            guard body.isEmpty else { throw SecurityError(.malformedMessage, "confirm: body is not empty") }
            return .confirm
        case byeType:
            guard body.count == 1, let reason = ByeReason(rawValue: body[0]) else {
                throw SecurityError(.malformedMessage, "bye: not a 1-byte known reason")
            }
            return .bye(reason)
        case countsQueryType:
            var reader = WireReader(body, structure: "counts query")
            let id = try reader.u32("query id")
            try reader.finish()
            return .countsQuery(queryID: id)
        case countsAnswerType: return .countsAnswer(try CountsAnswer.parse(body))
        case slotStatusType: return .slotStatus(try SlotStatus.parse(body))
        case keepAliveType:
            guard body.isEmpty else { throw SecurityError(.malformedMessage, "keep-alive: body is not empty") }
            return .keepAlive
        default: throw SecurityError(.malformedMessage, "control: unknown inner type")
        }
    }

    /// Parses the inner type byte followed by the body: the single-argument form for fuzzing and tests.
    public static func parse(_ bytes: [UInt8]) throws(SecurityError) -> ControlMessage {
        guard let type = bytes.first else { throw SecurityError(.malformedMessage, "control: empty") }
        return try parse(innerType: type, body: Array(bytes.dropFirst()))
    }

    /// The inner type byte followed by the body; `parse(_:)` of it returns `self`.
    public func encoded() -> [UInt8] { [innerType] + encodedBody() }

    /// The body encoding; `parse(innerType:body:)` of it returns `self`.
    public func encodedBody() -> [UInt8] {
        switch self {
        case .confirm, .keepAlive: return []
        case .bye(let reason): return [reason.rawValue]
        case .countsQuery(let id):
            var out: [UInt8] = []
            out.appendBigEndian(id)
            return out
        case .countsAnswer(let answer): return answer.encoded()
        case .slotStatus(let status): return status.encoded()
        }
    }
}
