import AetherSecurity

/// The secure-session record-level parsers (docs/SECURE-SESSION.md): the first byte selects
/// `RecordHeader.parse`, `ControlMessage.parse` (inner type byte, then body: confirm, BYE, counts query,
/// counts answer, slot status, keep-alive), `SlotStatus.parse` or `CountsAnswer.parse`; the rest is the
/// input. Properties: no crash; every accepted value re-encodes to exactly the input; the inner-type rule
/// (`RecordContent`) delivers only types below 0x40, never treats unknown or malformed control as proof
/// of a commit, and classifies a control record exactly as `ControlMessage.parse` does.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let selector = cursor.u8() % 4
    let input = cursor.rest
    switch selector {
    case 0:
        guard let header = try? RecordHeader.parse(input) else { return }
        FuzzCheck.require(header.encoded() == input, "record header does not re-encode")
        FuzzCheck.accepted("record header")
        FuzzCheck.require(header.counter < SessionWire.counterLimit, "record header accepts a counter of 2^32 or more")
        FuzzCheck.require(header.sessionID != 0, "record header accepts session id zero")
    case 1: checkControl(input)
    case 2:
        guard let status = try? SlotStatus.parse(input) else { return }
        FuzzCheck.require(status.encoded() == input, "slot status does not re-encode")
        FuzzCheck.accepted("slot status")
        FuzzCheck.require(status.entries.count <= SessionWire.maxSlots, "slot status accepts more than 16 slots")
    default:
        guard let answer = try? CountsAnswer.parse(input) else { return }
        FuzzCheck.require(answer.encoded() == input, "counts answer does not re-encode")
        FuzzCheck.accepted("counts answer")
    }
}

private func checkControl(_ input: [UInt8]) {
    let control: ControlMessage?
    do {
        control = try ControlMessage.parse(input)
    } catch {
        FuzzCheck.require(error.code == .malformedMessage, "control: a reject must be malformedMessage")
        control = nil
    }
    if let control {
        FuzzCheck.require(control.encoded() == input, "control message does not re-encode")
        FuzzCheck.require(control.innerType == input.first, "control message has another inner type")
        FuzzCheck.require(
            (try? ControlMessage.parse(innerType: control.innerType, body: control.encodedBody())) == control,
            "control body does not round-trip")
    }
    guard let innerType = input.first else { return }
    let content = RecordContent(innerType: innerType, plaintext: Array(input.dropFirst()))
    switch content {
    case .application(let type, let body):
        FuzzCheck.require(type < 0x40 && type == innerType, "application data with a control inner type")
        FuzzCheck.require(body == Array(input.dropFirst()), "application data is not the plaintext")
    case .control(let message):
        FuzzCheck.require(message == control, "inner-type rule disagrees with ControlMessage.parse")
    case .unknownControl(let type):
        FuzzCheck.require(type > 0x45 && type == innerType, "a known inner type classed as unknown control")
        FuzzCheck.require(!content.provesCommit, "unknown control proves a commit")
    case .malformedControl(let type):
        FuzzCheck.require((0x40...0x45).contains(type) && control == nil, "a parseable control classed as malformed")
        FuzzCheck.require(!content.provesCommit, "malformed control proves a commit")
    }
    FuzzCheck.accepted("record content \(content)")
    FuzzCheck.require(content.countsForLiveness, "an opened record does not count for liveness")
}
