import AetherTransport

/// The native protocol's documents and header fields (docs/PROTOCOL.md sections 2, 3 and 7); the first byte
/// selects the parser: `NativeCreateRequest`, `NativeStatusDocument`, `NativeCompleteRequest`,
/// `NativeChallengeRequest`, `NativeChallengeAnswer`, `NativeReceipt`, `ProblemDocument` (JSON), then
/// `AetherChunkHeader`, `AetherReceiptHeader`, `AetherReceivedHeader`, `AetherCapabilities` (field values).
/// Properties: no crash; an accepted document's canonical encoding parses back to the same value and is a fixed
/// point (parse -> encode -> parse is the identity); an accepted field value's `fieldValue` parses back to the
/// same value and re-encodes to itself.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let selector = cursor.u8() % 11
    let input = cursor.rest
    let text = String(decoding: input, as: UTF8.self)
    switch selector {
    case 0: document("create", input, NativeCreateRequest.init(json:), \.jsonBytes)
    case 1: document("status", input, NativeStatusDocument.init(json:), \.jsonBytes)
    case 2: document("complete", input, NativeCompleteRequest.init(json:), \.jsonBytes)
    case 3: document("challenge", input, NativeChallengeRequest.init(json:), \.jsonBytes)
    case 4: document("challenge answer", input, NativeChallengeAnswer.init(json:), \.jsonBytes)
    case 5: document("receipt", input, NativeReceipt.init(json:), \.jsonBytes)
    case 6:
        document("problem", input, ProblemDocument.init(json:), \.jsonBytes)
        if let problem = try? ProblemDocument(json: input) {
            FuzzCheck.require((400...599).contains(problem.status), "a problem's status is not 4xx or 5xx")
        }
    case 7: field("Aether-Chunk", text, AetherChunkHeader.init(parsing:), \.fieldValue)
    case 8: field("Aether-Receipt", text, AetherReceiptHeader.init(parsing:), \.fieldValue)
    case 9:
        field("Aether-Received", text, AetherReceivedHeader.init(parsing:), \.fieldValue)
        if let received = try? AetherReceivedHeader(parsing: text) {
            FuzzCheck.require(received.prefix <= received.chunks, "Aether-Received prefix above chunks")
        }
    default:
        field("Aether-Capabilities", text, AetherCapabilities.init(parsing:), \.fieldValue)
        if let capabilities = try? AetherCapabilities(parsing: text) {
            FuzzCheck.require(
                capabilities.minimumChunkSize <= capabilities.maximumChunkSize, "min-chunk above max-chunk accepted")
        }
    }
}

/// parse -> encode -> parse is the identity, and the encoding is a fixed point.
private func document<Document: Equatable>(
    _ what: String, _ input: [UInt8], _ parse: ([UInt8]) throws(AetherProtocolError) -> Document,
    _ encode: KeyPath<Document, [UInt8]>
) {
    guard let parsed = try? parse(input) else { return }
    FuzzCheck.accepted(what)
    let encoded = parsed[keyPath: encode]
    let reparsed: Document
    do {
        reparsed = try parse(encoded)
    } catch {
        FuzzCheck.fail("\(what): the canonical encoding of an accepted document is refused: \(error)")
    }
    FuzzCheck.require(reparsed == parsed, "\(what): parse -> encode -> parse changed the document")
    FuzzCheck.require(reparsed[keyPath: encode] == encoded, "\(what): the canonical encoding is not a fixed point")
}

/// A field value's `fieldValue` parses back to the same value and re-encodes to itself.
private func field<Field: Equatable>(
    _ what: String, _ text: String, _ parse: (String) throws(AetherProtocolError) -> Field,
    _ encode: KeyPath<Field, String>
) {
    guard let parsed = try? parse(text) else { return }
    FuzzCheck.accepted(what)
    let encoded = parsed[keyPath: encode]
    let reparsed: Field
    do {
        reparsed = try parse(encoded)
    } catch {
        FuzzCheck.fail("\(what): the field value of an accepted field is refused: \(error)")
    }
    FuzzCheck.require(reparsed == parsed, "\(what): parse -> fieldValue -> parse changed the field")
    FuzzCheck.require(reparsed[keyPath: encode] == encoded, "\(what): fieldValue is not a fixed point")
}
