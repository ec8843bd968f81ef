/// Where an object goes: `s3://bucket/key`. The key is taken as written (no percent-decoding), like the AWS CLI.
public struct S3Destination: Sendable, Hashable, CustomStringConvertible {
    /// The bucket name.
    public let bucket: String
    /// The object key.
    public let key: String

    /// A destination from its parts, checked like `init(parsing:)`.
    public init(bucket: String, key: String) throws(TransportError) {
        guard bucket.utf8.count >= 3, bucket.utf8.count <= 63,
            bucket.utf8.allSatisfy({
                ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D
            }),
            let first = bucket.utf8.first, let last = bucket.utf8.last, first != 0x2E, first != 0x2D, last != 0x2E,
            last != 0x2D, !bucket.contains("..")
        else {
            throw TransportError(
                .invalidArgument,
                "bucket name \(bucket.prefix(70)) is not 3-63 lower-case letters, digits, dots and hyphens")
        }
        guard !key.isEmpty, key.utf8.count <= 1024 else {
            throw TransportError(.invalidArgument, "the object key is empty or longer than 1,024 bytes")
        }
        guard !key.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw TransportError(.invalidArgument, "the object key contains a control character")
        }
        // HTTP clients (libcurl included) remove dot segments from a URL path, so such a key would be stored
        // under another name; refuse it rather than write somewhere unexpected.
        guard !key.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." })
        else { throw TransportError(.invalidArgument, "the object key has a '.' or '..' path segment") }
        self.bucket = bucket
        self.key = key
    }

    /// Parses `s3://bucket/key`.
    public init(parsing text: String) throws(TransportError) {
        guard text.hasPrefix("s3://") else {
            throw TransportError(.invalidArgument, "an S3 destination starts with s3://")
        }
        let rest = text.dropFirst("s3://".count)
        guard let slash = rest.firstIndex(of: "/") else {
            throw TransportError(.invalidArgument, "an S3 destination needs a key: s3://bucket/key")
        }
        try self.init(bucket: String(rest[..<slash]), key: String(rest[rest.index(after: slash)...]))
    }

    public var description: String { "s3://\(bucket)/\(key)" }
}
