import AetherSecurity

/// The certificate and key entry points `aether pin` uses: `SPKIPin(certificateDER:)`,
/// `SPKIPin.pins(certificatesPEM:)` / `SPKIPin.certificatesDER(pem:)` and `PinSigningKey(pem:)`; the
/// first byte selects which. Properties: no crash (OpenSSL is called on hostile bytes); errors are
/// `.malformedMessage` (`.invalidKey` for keys); a PEM's pins are the pins of its DER certificates, and
/// each of those DER certificates parses on its own; a signing key's id is 64 lowercase hex digits.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let selector = cursor.u8() % 3
    let input = cursor.rest
    switch selector {
    case 0:
        do {
            _ = try SPKIPin(certificateDER: input)
            FuzzCheck.accepted("DER certificate")
        } catch {
            FuzzCheck.require(error.code == .malformedMessage, "DER: a reject must be malformedMessage")
        }
    case 1:
        let pins: [SPKIPin]
        do { pins = try SPKIPin.pins(certificatesPEM: input) } catch {
            FuzzCheck.require(error.code == .malformedMessage, "PEM: a reject must be malformedMessage")
            return
        }
        guard let certificates = try? SPKIPin.certificatesDER(pem: input) else {
            FuzzCheck.fail("a PEM with pins has no certificates")
        }
        let again = certificates.map { try? SPKIPin(certificateDER: $0) }
        FuzzCheck.accepted("PEM with \(pins.count) certificates")
        FuzzCheck.require(again == pins.map { Optional($0) }, "PEM pins differ from the pins of its DER certificates")
    default:
        do {
            let key = try PinSigningKey(pem: String(decoding: input, as: UTF8.self))
            FuzzCheck.accepted("signing key")
            FuzzCheck.require(
                key.id.utf8.count == 64
                    && key.id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) },
                "a signing key id is not 64 lowercase hex digits")
        } catch {
            FuzzCheck.require(error.code == .invalidKey, "key PEM: a reject must be invalidKey")
        }
    }
}
