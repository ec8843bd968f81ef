import AetherSecurity

/// Every session wire parser by the name the vector files use, returning its canonical output: the
/// re-encoding of the parsed value (for the record header, followed by the inner-type class byte).
enum SessionParserTable {
    static let names = [
        "hello", "message2_payload", "accept", "stale", "too_new", "pair_again", "session_busy", "tombstone",
        "record_header", "confirm", "bye", "counts_query", "counts_answer", "slot_status", "keep_alive",
        "message1", "message2",
    ]

    static func parse(_ name: String, _ bytes: [UInt8]) throws -> [UInt8] {
        switch name {
        case "hello": return try Hello.parse(bytes).encoded()
        case "message2_payload": return try Message2Payload.parse(bytes).encoded()
        case "accept": return try Accept.parse(bytes).encoded()
        case "stale": return try Stale.parse(bytes).encoded()
        case "too_new": return try TooNew.parse(bytes).encoded()
        case "pair_again": return try PairAgain.parse(bytes).encoded()
        case "session_busy": return try SessionBusy.parse(bytes).encoded()
        case "tombstone": return try Tombstone.parse(bytes).encoded()
        case "record_header":
            let header = try RecordHeader.parse(bytes)
            return header.encoded() + [header.innerTypeClass.rawValue]
        case "confirm": return try control(ControlMessage.confirmType, bytes)
        case "bye": return try control(ControlMessage.byeType, bytes)
        case "counts_query": return try control(ControlMessage.countsQueryType, bytes)
        case "counts_answer": return try CountsAnswer.parse(bytes).encoded()
        case "slot_status": return try SlotStatus.parse(bytes).encoded()
        case "keep_alive": return try control(ControlMessage.keepAliveType, bytes)
        case "message1": return try Message1.parse(bytes).encoded()
        case "message2": return try Message2.parse(bytes).encoded()
        default: throw SecurityError(.malformedMessage, "no parser named \(name)")
        }
    }

    private static func control(_ type: UInt8, _ body: [UInt8]) throws -> [UInt8] {
        let message = try ControlMessage.parse(innerType: type, body: body)
        guard message.innerType == type else { throw SecurityError(.malformedMessage, "wrong control type") }
        return message.encodedBody()
    }
}
