import AetherIO
import AetherTransport

/// Header parsing shared by the three protocols, on the project's Structured Fields parser. Every refusal is a
/// `ReceiverError` naming the header, never its value (a value could be a secret).
enum RequestFields {
    /// An RFC 9651 Integer Item, 0 or more (IETF `Upload-Offset`, `Upload-Length`); nil when absent.
    static func integer(_ request: HTTPServerRequest, _ name: String) throws(ReceiverError) -> Int64? {
        guard let text = request.header(name) else { return nil }
        guard case .integer(let value)? = StructuredField.item(text), value >= 0 else {
            throw ReceiverError(.malformedRequest, "\(name) is not a non-negative integer")
        }
        return value
    }

    /// An RFC 9651 Boolean Item (IETF `Upload-Complete`); nil when absent.
    static func boolean(_ request: HTTPServerRequest, _ name: String) throws(ReceiverError) -> Bool? {
        guard let text = request.header(name) else { return nil }
        guard case .boolean(let value)? = StructuredField.item(text) else {
            throw ReceiverError(.malformedRequest, "\(name) is not ?0 or ?1")
        }
        return value
    }

    /// The `sha-256` member of an RFC 9530 digest field (`Content-Digest`, `Repr-Digest`); nil when the field is
    /// absent or names only other algorithms.
    static func sha256Digest(_ request: HTTPServerRequest, _ name: String) throws(ReceiverError) -> Digest32? {
        guard let text = request.header(name) else { return nil }
        guard let members = StructuredField.dictionary(text) else {
            throw ReceiverError(.malformedRequest, "\(name) is not a Structured Fields dictionary")
        }
        guard let member = members.first(where: { $0.key == "sha-256" }) else { return nil }
        guard case .item(.bytes(let bytes)) = member.value, bytes.count == 32,
            let digest = try? Digest32(bytes: bytes)
        else {
            throw ReceiverError(.malformedRequest, "\(name) sha-256 is not a 32-byte byte sequence")
        }
        return digest
    }

    /// A tus integer: 1 to 18 ASCII digits and nothing else; nil when absent.
    static func tusInteger(_ request: HTTPServerRequest, _ name: String) throws(ReceiverError) -> Int64? {
        let values = request.values(name)
        guard let text = values.first else { return nil }
        guard values.count == 1, (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int64(text)
        else {
            throw ReceiverError(.malformedRequest, "\(name) is not 1 to 18 digits")
        }
        return value
    }

    /// Refuses a request whose body length is ambiguous (RFC 9112 section 6.3), before any byte of it is read:
    /// `Content-Length` lines that are not all the same digits (libmicrohttpd reads the body by the first and would
    /// take the rest as the next request), `Content-Length` beside `Transfer-Encoding`, and a `Transfer-Encoding`
    /// other than `chunked` alone (libmicrohttpd would read such a body until the connection closes).
    static func checkFraming(_ request: HTTPServerRequest) throws(ReceiverError) {
        let lengths = request.values("Content-Length").map { Substring($0).trimmingCharacters(in: " \t") }
        let codings = request.values("Transfer-Encoding")
        if !codings.isEmpty {
            guard lengths.isEmpty else {
                throw ReceiverError(.malformedRequest, "Content-Length and Transfer-Encoding are both given")
            }
            let joined = codings.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false)
            guard joined.count == 1, joined[0].trimmingCharacters(in: " \t").lowercased() == "chunked" else {
                throw ReceiverError(.malformedRequest, "Transfer-Encoding other than chunked is not accepted")
            }
        }
        guard let first = lengths.first else { return }
        guard !first.isEmpty, first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), lengths.allSatisfy({ $0 == first })
        else {
            throw ReceiverError(.malformedRequest, "the Content-Length lines disagree or are not one number")
        }
    }

    /// `Content-Length` as libmicrohttpd enforced it, or nil for no body / a chunked body.
    static func contentLength(_ request: HTTPServerRequest) -> Int64? {
        guard let text = request.values("Content-Length").first else { return nil }
        return Int64(text)
    }

    /// Whether a body follows the header block.
    static func hasBody(_ request: HTTPServerRequest) -> Bool { request.hasBody }

    /// The media type of `Content-Type` without parameters, lower-cased; nil when absent.
    static func mediaType(_ request: HTTPServerRequest) -> String? {
        guard let text = request.header("Content-Type") else { return nil }
        let type = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return type.trimmingCharacters(in: " \t").lowercased()
    }
}

extension Substring {
    /// The text without the given leading and trailing characters.
    func trimmingCharacters(in characters: String) -> String {
        var text = self
        while let first = text.first, characters.contains(first) { text = text.dropFirst() }
        while let last = text.last, characters.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
