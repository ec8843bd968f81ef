import AetherSecurity

/// The proof-of-possession wire parsers: `PossessionChallenge(serialized:)`,
/// `PossessionResponse(serialized:)` and `UUIDv7(bytes:)`; the first byte selects which. Properties: no
/// crash; errors are `.malformedMessage` (`.invalidKey` is not reachable: keys are any 32 bytes); every
/// accepted message re-serializes to exactly the input; an accepted challenge has 1 ... 64 items and an
/// accepted nonce is a version-7, RFC 4122-variant UUID.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let selector = cursor.u8() % 3
    let input = cursor.rest
    switch selector {
    case 0:
        let challenge: PossessionChallenge
        do { challenge = try PossessionChallenge(serialized: input) } catch {
            FuzzCheck.require(error.code == .malformedMessage, "challenge: a reject must be malformedMessage")
            return
        }
        FuzzCheck.accepted("challenge")
        FuzzCheck.require(challenge.serialized == input, "an accepted challenge does not re-serialize to its bytes")
        FuzzCheck.require((1...64).contains(challenge.items.count), "challenge item count out of range")
    case 1:
        let response: PossessionResponse
        do { response = try PossessionResponse(serialized: input) } catch {
            FuzzCheck.require(error.code == .malformedMessage, "response: a reject must be malformedMessage")
            return
        }
        FuzzCheck.accepted("response")
        FuzzCheck.require(response.serialized == input, "an accepted response does not re-serialize to its bytes")
    default:
        guard let nonce = try? UUIDv7(bytes: input) else { return }
        FuzzCheck.accepted("UUIDv7")
        FuzzCheck.require(nonce.bytes == input, "a UUIDv7 does not round-trip")
        FuzzCheck.require(input[6] >> 4 == 7 && input[8] >> 6 == 2, "a UUID of another version or variant accepted")
        FuzzCheck.require(nonce.description.utf8.count == 36, "a UUID's text form is not 36 characters")
    }
}
