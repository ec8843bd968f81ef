/// Which S3 implementation is behind an endpoint: its limits (`BackendCapabilities`) and what it checks of a part's
/// bytes (`serverPartChecks`), so that the integrity of an upload rests on checks that are made.
public enum S3Flavor: String, Sendable, Hashable, CaseIterable {
    /// Amazon S3: parts of 5 MiB to 5 GiB (the last may be smaller), at most 10,000 parts, objects up to 5 TiB.
    case aws
    /// Cloudflare R2: S3's limits, and every part but the last of one size.
    case r2
    /// MinIO: S3's part limits.
    case minio
    /// Ceph RADOS Gateway: S3's part limits (`rgw_multipart_min_part_size` 5 MiB by default). 16.2 accepts
    /// `x-amz-checksum-*` headers and ignores them (a wrong CRC32C gets 200), so none is sent.
    case ceph
    /// Another server behind a custom endpoint: S3's limits, and no check of the bytes is taken on trust.
    case unknown

    /// The flavor of an endpoint as the URL shows it: none (AWS's default endpoint) or a host under
    /// `amazonaws.com` is AWS, one under `r2.cloudflarestorage.com` R2; any other is `.unknown` (MinIO and Ceph
    /// cannot be told from a URL: `--s3-flavor` names them).
    public static func detect(endpoint: S3Endpoint?) -> S3Flavor {
        guard let endpoint else { return .aws }
        let host = endpoint.host.lowercased()
        if host == "amazonaws.com" || host.hasSuffix(".amazonaws.com") { return .aws }
        if host.hasSuffix(".r2.cloudflarestorage.com") { return .r2 }
        return .unknown
    }

    /// What the server checks of each part it is sent, and refuses when it does not match.
    ///
    /// - AWS, R2, MinIO: the signed payload SHA-256 (`XAmzContentSHA256Mismatch`), Content-MD5 (`BadDigest`) and
    ///   `x-amz-checksum-crc32c` (`BadDigest`).
    /// - Ceph RGW 16.2: the signed payload SHA-256 and Content-MD5; not the CRC32C (ignored).
    /// - Unknown: nothing is known (moto, for one, checks none of them), so the client checks each part's ETag.
    public var serverPartChecks: Set<PartCheck> {
        switch self {
        case .aws, .r2, .minio: [.serverSHA256, .serverCRC32C]
        case .ceph: [.serverSHA256]
        case .unknown: []
        }
    }

    /// The limits of this flavor; `checksums` are the per-part checksums the server checks.
    public var capabilities: BackendCapabilities {
        var checksums: Set<BackendCapabilities.ChecksumKind> = []
        if serverPartChecks.contains(.serverSHA256) { checksums.insert(.sha256) }
        if serverPartChecks.contains(.serverCRC32C) { checksums.insert(.crc32c) }
        return BackendCapabilities(
            minimumPartSize: 5 << 20, maximumPartSize: 5 << 30, maximumParts: 10_000, equalParts: self == .r2,
            parallelParts: true, outOfOrderParts: true, checksums: checksums, resumeQuery: .parts,
            maximumObjectSize: 5 << 40)
    }

    /// Whether parts carry `x-amz-checksum-crc32c`: where the server checks it, and on an unknown server (which
    /// may check it; it counts as checked only when the answer echoes it). Not to Ceph, which ignores it.
    var sendsCRC32C: Bool { self != .ceph }
}
