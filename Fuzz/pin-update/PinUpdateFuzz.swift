import AetherSecurity

/// The pin update parsers: `PinUpdatePayload(json:)` and `SPKIPin(base64:)`; the first byte selects
/// which. Properties: no crash; errors are `.malformedMessage`; an accepted payload has 1 ... 64 distinct
/// pins, expiry after the effective date, and its JSON form parses back to the same payload with the same
/// signed bytes; an accepted pin is canonical base64 (re-encodes to exactly the input).
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let selector = cursor.u8() % 2
    let input = cursor.rest
    if selector == 0 {
        let payload: PinUpdatePayload
        do {
            payload = try PinUpdatePayload(json: input)
        } catch {
            FuzzCheck.require(error.code == .malformedMessage, "pin update: a reject must be malformedMessage")
            return
        }
        FuzzCheck.accepted("pin update")
        FuzzCheck.require((1...64).contains(payload.newCAPins.count), "pin count out of range")
        FuzzCheck.require(Set(payload.newCAPins).count == payload.newCAPins.count, "repeated pins accepted")
        FuzzCheck.require(payload.expiryDate > payload.effectiveDate, "expiry not after the effective date")
        guard let json = try? payload.jsonBytes() else { FuzzCheck.fail("an accepted payload does not encode") }
        guard let reparsed = try? PinUpdatePayload(json: json) else {
            FuzzCheck.fail("an encoded payload does not parse")
        }
        FuzzCheck.require(reparsed == payload, "pin update does not round-trip")
        FuzzCheck.require(reparsed.signedBytes == payload.signedBytes, "signed bytes differ after a round trip")
    } else {
        let text = String(decoding: input, as: UTF8.self)
        guard let pin = try? SPKIPin(base64: text) else { return }
        FuzzCheck.accepted("pin")
        FuzzCheck.require(pin.base64 == text && pin.description == text, "an accepted pin is not canonical base64")
    }
}
