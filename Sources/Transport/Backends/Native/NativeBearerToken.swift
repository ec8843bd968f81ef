/// A bearer token for the native receiver (`Authorization: Bearer {token}`, `docs/PROTOCOL.md` section 3). It
/// prints as `<redacted>` everywhere (description, debug description, reflection), so it never reaches a log, an
/// error or a description; only the request header carries it.
public struct NativeBearerToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let value: String

    /// A token: 1 ... 4,096 characters of the RFC 6750 `b64token` alphabet (`A-Z a-z 0-9 - . _ ~ + /`, then `=`).
    public init(_ value: String) throws(TransportError) {
        let bytes = Array(value.utf8)
        let body = bytes.prefix { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || [0x2D, 0x2E, 0x5F, 0x7E, 0x2B, 0x2F].contains(byte)
        }
        guard (1...4096).contains(bytes.count), !body.isEmpty,
            bytes.dropFirst(body.count).allSatisfy({ $0 == UInt8(ascii: "=") })
        else { throw TransportError(.invalidArgument, "the bearer token is empty, too long or not a b64token") }
        self.value = value
    }

    /// The `Authorization` field value.
    var fieldValue: String { "Bearer " + value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: []) }
}
