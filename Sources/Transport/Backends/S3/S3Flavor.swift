/// Which S3 implementation is behind an endpoint, for its limits (`BackendCapabilities`).
public enum S3Flavor: Sendable, Hashable {
    /// Amazon S3: parts of 5 MiB to 5 GiB (the last may be smaller), at most 10,000 parts, objects up to 5 TiB.
    case aws
    /// Cloudflare R2: S3's limits, and every part but the last of one size.
    case r2
    /// MinIO: S3's part limits.
    case minio
    /// Ceph RADOS Gateway: S3's part limits (`rgw_multipart_min_part_size` 5 MiB by default).
    case ceph

    /// The limits of this flavor.
    public var capabilities: BackendCapabilities {
        BackendCapabilities(
            minimumPartSize: 5 << 20, maximumPartSize: 5 << 30, maximumParts: 10_000, equalParts: self == .r2,
            parallelParts: true, outOfOrderParts: true, checksums: self == .ceph ? [.sha256] : [.crc32c, .sha256],
            resumeQuery: .parts, maximumObjectSize: 5 << 40)
    }
}
