import FoundationEssentials

/// tus `Upload-Metadata` (creation extension): comma-separated `key base64(value)` pairs. Keys are non-empty,
/// unique, printable ASCII without space or comma; values are any bytes, sent in standard base64.
package enum TusMetadata {
    /// The header value for `metadata`, keys in sorted order so the same metadata gives the same bytes. An empty
    /// value is sent as the key alone. A key the protocol cannot carry throws `.invalidArgument`.
    package static func encode(_ metadata: [String: String]) throws(TransportError) -> String {
        var pairs: [String] = []
        for key in metadata.keys.sorted() {
            guard !key.isEmpty, key.utf8.count <= 256, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x2C })
            else {
                throw TransportError(
                    .invalidArgument, "a metadata key is empty, too long, or has a space, comma or non-ASCII byte")
            }
            let value = metadata[key] ?? ""
            pairs.append(value.isEmpty ? key : "\(key) \(Data(value.utf8).base64EncodedString())")
        }
        return pairs.joined(separator: ",")
    }

    /// The pairs of a received header value. Malformed base64, a value that is not UTF-8, a bad or repeated key
    /// throws `.protocolViolation`.
    package static func decode(_ header: String) throws(TransportError) -> [String: String] {
        var metadata: [String: String] = [:]
        if header.trimmingASCIISpaces().isEmpty { return metadata }
        for pair in header.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = String(pair).trimmingASCIISpaces()
            let fields = trimmed.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 1 || fields.count == 2 else { throw malformed("a pair has more than one space") }
            let key = String(fields[0])
            // The encoder's key rule: a key it would refuse could not be given back (tus HEAD).
            guard !key.isEmpty, key.utf8.count <= 256, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw malformed("a key is empty, over 256 bytes or not printable ASCII")
            }
            guard metadata[key] == nil else { throw malformed("a key is repeated") }
            guard fields.count == 2 else {
                metadata[key] = ""
                continue
            }
            guard let data = Data(base64Encoded: String(fields[1])) else { throw malformed("a value is not base64") }
            guard let value = String(validating: data, as: UTF8.self) else {
                throw malformed("a value is not UTF-8")
            }
            metadata[key] = value
        }
        return metadata
    }

    private static func malformed(_ why: String) -> TransportError {
        TransportError(.protocolViolation, "Upload-Metadata is malformed: \(why)")
    }
}
