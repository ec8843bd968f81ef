/// A content coding a chunk may travel in (`Content-Encoding`, `docs/PROTOCOL.md` section 3.2). Digests are
/// always of the decoded bytes.
public enum ContentCoding: String, Sendable, Hashable, CaseIterable {
    /// Zstandard (RFC 8878), one frame.
    case zstd
    /// RFC 9110 `deflate`: the zlib format (RFC 1950) around a deflate stream (RFC 1951).
    case deflate

    /// The coding named by a `Content-Encoding` token (ASCII case-insensitive), or nil.
    public init?(token: String) {
        guard let coding = ContentCoding(rawValue: token.lowercased()) else { return nil }
        self = coding
    }
}
