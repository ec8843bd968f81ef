import AetherSecurity

/// The secure-session handshake parsers (docs/SECURE-SESSION.md): the first byte selects
/// `Message1.parse`, `Message2.parse`, `Hello.parse` or the message 2 payloads (`Message2Payload.parse`
/// and each kind's own parser: Accept, Stale, TooNew, PairAgain, SessionBusy, Tombstone); the rest is the
/// input. Properties: no crash; errors are `.malformedMessage`; every accepted value re-encodes to exactly
/// the input (strict and total); `Message2Payload.parse` agrees with the parser of the input's kind byte
/// and every other kind's parser refuses the input.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let selector = cursor.u8() % 4
    let input = cursor.rest
    switch selector {
    case 0: check(input, "message 1") { (b) throws(SecurityError) in try Message1.parse(b).encoded() }
    case 1: check(input, "message 2") { (b) throws(SecurityError) in try Message2.parse(b).encoded() }
    case 2: check(input, "hello") { (b) throws(SecurityError) in try Hello.parse(b).encoded() }
    default: checkPayload(input)
    }
}

/// Runs one parser: a reject must be `.malformedMessage`, an accept must re-encode to the input.
/// Returns whether the parser accepted.
@discardableResult
private func check(_ input: [UInt8], _ name: String, _ roundTrip: ([UInt8]) throws(SecurityError) -> [UInt8]) -> Bool {
    let encoded: [UInt8]
    do {
        encoded = try roundTrip(input)
    } catch {
        FuzzCheck.require(
            error.code == .malformedMessage, "\(name): a reject must be malformedMessage, got \(error.code)")
        return false
    }
    FuzzCheck.require(encoded == input, "\(name): an accepted input does not re-encode to its bytes")
    FuzzCheck.accepted(name)
    return true
}

private func checkPayload(_ input: [UInt8]) {
    let payload = try? Message2Payload.parse(input)
    if let payload { FuzzCheck.require(payload.encoded() == input, "message 2 payload does not re-encode") }
    check(input, "message 2 payload") { (b) throws(SecurityError) in try Message2Payload.parse(b).encoded() }

    // Each kind's parser, called directly: only the one named by the kind byte may accept, and it
    // must agree with the dispatching parser.
    let kinds: [(UInt8, String, Message2Payload?)] = [
        (Accept.kind, "accept", try? .accept(Accept.parse(input))),
        (Stale.kind, "stale", try? .stale(Stale.parse(input))),
        (TooNew.kind, "too new", try? .tooNew(TooNew.parse(input))),
        (PairAgain.kind, "pair again", try? .pairAgain(PairAgain.parse(input))),
        (SessionBusy.kind, "session busy", try? .sessionBusy(SessionBusy.parse(input))),
        (Tombstone.kind, "tombstone", try? .tombstone(Tombstone.parse(input))),
    ]
    for (kind, name, parsed) in kinds {
        if input.first == kind {
            FuzzCheck.require(parsed == payload, "\(name): disagrees with Message2Payload.parse")
        } else {
            FuzzCheck.require(parsed == nil, "\(name): accepts a payload of another kind")
        }
    }
    check(input, "accept") { (b) throws(SecurityError) in try Accept.parse(b).encoded() }
    check(input, "stale") { (b) throws(SecurityError) in try Stale.parse(b).encoded() }
    check(input, "too new") { (b) throws(SecurityError) in try TooNew.parse(b).encoded() }
    check(input, "pair again") { (b) throws(SecurityError) in try PairAgain.parse(b).encoded() }
    check(input, "session busy") { (b) throws(SecurityError) in try SessionBusy.parse(b).encoded() }
    check(input, "tombstone") { (b) throws(SecurityError) in try Tombstone.parse(b).encoded() }
}
