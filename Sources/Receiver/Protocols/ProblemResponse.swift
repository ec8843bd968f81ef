import AetherTransport

/// Every error answer: an RFC 9457 problem document (`docs/PROTOCOL.md` section 7) built from a `ReceiverError`.
/// The detail is the error's message, which never holds key material, tokens or file contents.
enum ProblemResponse {
    /// The problem answer for `error`; `status` overrides the code's own (tus answers a checksum mismatch with
    /// 460); `headers` are added first (protocol headers, `Upload-Offset` of a conflict).
    static func make(
        _ error: ReceiverError, status: Int? = nil, headers: [(name: String, value: String)] = []
    ) -> HTTPServerResponse {
        let code = status ?? error.code.status
        let problem = ProblemDocument(
            name: error.code.name, title: title(error.code), status: code, detail: String(error.message.prefix(1000)),
            chunk: error.chunk, offset: error.offset)
        var response = HTTPServerResponse(status: code, headers: headers, body: problem.jsonBytes)
        response.add("Content-Type", AetherWire.problemMediaType)
        response.add("Cache-Control", "no-store")
        if code == 401 { response.add("WWW-Authenticate", "Bearer") }
        return response
    }

    /// A short, fixed title per problem.
    static func title(_ code: ReceiverError.Code) -> String {
        switch code.name {
        case "malformed-request": "Malformed request"
        case "unknown-protocol": "Unknown upload protocol"
        case "unauthorized": "Unauthorized"
        case "forbidden": "Forbidden"
        case "not-found": "No such upload"
        case "offset-mismatch": "Offset mismatch"
        case "duplicate-chunk": "Chunk stored with other bytes"
        case "partial-mismatch": "Continuation from another offset than the received prefix"
        case "incomplete": "Upload incomplete"
        case "capture-mismatch": "Not a capture this receiver holds"
        case "expired": "Upload expired or cancelled"
        case "too-large": "Too large"
        case "unsupported-media-type": "Unsupported media type"
        case "digest-mismatch": "Digest mismatch"
        case "length-mismatch": "Length mismatch"
        case "chain-broken": "Commitment chain broken"
        case "merkle-mismatch": "Merkle root mismatch"
        case "possession-failed": "Proof of possession failed"
        case "too-many-requests": "Too many requests"
        case "storage-failed": "Storage failed"
        case "unavailable": "Unavailable"
        default: "Error"
        }
    }
}
