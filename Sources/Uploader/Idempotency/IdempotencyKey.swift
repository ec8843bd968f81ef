public import AetherIO

/// An `Idempotency-Key` header value (upload-engine v2.2, ChunkIdempotencyManager): the lowercase hex SHA-256 of
/// the ASCII/UTF-8 text `session:index:chunkHashHex:attempt`, with `index` and `attempt` in decimal and the
/// chunk's SHA-256 in lowercase hex. The three fields after the session hold no colon, so the text is read
/// back unambiguously from the right whatever the session id holds.
public struct IdempotencyKey: Hashable, Sendable, CustomStringConvertible {
    /// The 64 lowercase hex digits sent as the header value.
    public let hex: String

    /// The key of one attempt to send chunk `index` (with SHA-256 `chunkHash`) in `session`.
    public init(session: String, index: Int, chunkHash: Digest32, attempt: Int) {
        hex =
            SHA256.hash(
                Array(Self.preimage(session: session, index: index, chunkHash: chunkHash, attempt: attempt).utf8)
            )
            .hex
    }

    /// The hashed text, `session:index:chunkHashHex:attempt`.
    public static func preimage(session: String, index: Int, chunkHash: Digest32, attempt: Int) -> String {
        "\(session):\(index):\(chunkHash.hex):\(attempt)"
    }

    /// The header name (RFC 6648: no `X-` prefix).
    public static let headerName = "Idempotency-Key"

    public var description: String { hex }
}
