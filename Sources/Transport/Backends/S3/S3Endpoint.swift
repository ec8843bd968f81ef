/// The S3 service an upload talks to: scheme, host and port, how buckets are addressed, and the region that signs.
public struct S3Endpoint: Sendable, Hashable {
    /// How the bucket appears in a request.
    public enum Addressing: Sendable, Hashable {
        /// `https://host/bucket/key` (MinIO, Ceph, local test servers).
        case path
        /// `https://bucket.host/key` (AWS's default; the bucket must be a DNS label without dots over TLS).
        case virtualHost
    }

    /// `http` or `https`.
    public let scheme: String
    /// The host name or address (IPv6 in brackets).
    public let host: String
    /// The port, nil for the scheme's default.
    public let port: Int?
    /// Path-style or virtual-host addressing.
    public let addressing: Addressing
    /// The signing region (`us-east-1`; R2 uses `auto`).
    public let region: String

    /// AWS S3 in `region`, virtual-host addressing.
    public static func aws(region: String) -> S3Endpoint {
        S3Endpoint(
            scheme: "https", host: "s3.\(region).amazonaws.com", port: nil, addressing: .virtualHost, region: region)
    }

    /// Cloudflare R2 for `accountID` (region `auto`, path-style addressing).
    public static func r2(accountID: String) -> S3Endpoint {
        S3Endpoint(
            scheme: "https", host: "\(accountID).r2.cloudflarestorage.com", port: nil, addressing: .path,
            region: "auto")
    }

    /// An endpoint from a URL such as `http://127.0.0.1:9000` (MinIO, Ceph, moto); path-style unless asked.
    public init(url: String, region: String, addressing: Addressing = .path) throws(TransportError) {
        let lower = url.lowercased()
        let scheme: String
        if lower.hasPrefix("https://") {
            scheme = "https"
        } else if lower.hasPrefix("http://") {
            scheme = "http"
        } else {
            throw TransportError(.invalidArgument, "an S3 endpoint is an http:// or https:// URL")
        }
        var authority = Substring(url.dropFirst(scheme.count + 3))
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@"), !authority.contains("?"),
            !authority.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F })
        else {
            throw TransportError(.invalidArgument, "an S3 endpoint URL has only a scheme, a host and a port")
        }
        var host = String(authority)
        var port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            guard let number = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(number) else {
                throw TransportError(.invalidArgument, "the S3 endpoint's port is not 1-65535")
            }
            host = String(authority[..<colon])
            port = number
        }
        guard !host.isEmpty else { throw TransportError(.invalidArgument, "the S3 endpoint has no host") }
        self.init(scheme: scheme, host: host, port: port, addressing: addressing, region: region)
    }

    init(scheme: String, host: String, port: Int?, addressing: Addressing, region: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.addressing = addressing
        self.region = region
    }

    /// The `Host` header value and the URL's authority for `bucket`.
    func authority(bucket: String) -> String {
        let name = addressing == .virtualHost ? "\(bucket).\(host)" : host
        guard let port, port != (scheme == "https" ? 443 : 80) else { return name }
        return "\(name):\(port)"
    }

    /// The decoded path of `destination` (what SigV4 encodes): `/bucket/key` or `/key`.
    func path(of destination: S3Destination) -> String {
        addressing == .virtualHost ? "/\(destination.key)" : "/\(destination.bucket)/\(destination.key)"
    }

    /// Checks that `destination` can be addressed here (virtual-host over TLS needs a bucket without dots).
    func validate(_ destination: S3Destination) throws(TransportError) {
        if addressing == .virtualHost, scheme == "https", destination.bucket.contains(".") {
            throw TransportError(
                .invalidArgument,
                "bucket \(destination.bucket) has dots, which TLS certificates do not cover; use path-style addressing")
        }
    }

    /// The decoded path of `bucket` itself (bucket-level requests: ListObjectsV2, HeadBucket): `/bucket` or `/`.
    func bucketPath(_ bucket: String) -> String { addressing == .virtualHost ? "/" : "/\(bucket)" }

    /// The full URL for `destination` with `query` (names and values encoded as SigV4 encodes them).
    func url(for destination: S3Destination, query: [(name: String, value: String)]) -> String {
        url(bucket: destination.bucket, path: path(of: destination), query: query)
    }

    /// The full URL of the decoded `path` under `bucket`'s authority, with `query`.
    func url(bucket: String, path: String, query: [(name: String, value: String)]) -> String {
        var url = "\(scheme)://\(authority(bucket: bucket))"
        url += S3SigV4Signer.encode(path, keepSlash: true)
        if !query.isEmpty {
            url +=
                "?"
                + query.map { item in
                    let name = S3SigV4Signer.encode(item.name, keepSlash: false)
                    return item.value.isEmpty && item.name == "uploads"
                        ? name
                        : "\(name)=\(S3SigV4Signer.encode(item.value, keepSlash: false))"
                }.joined(separator: "&")
        }
        return url
    }
}
