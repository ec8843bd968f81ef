/// Speed class of the uplink, from the predicted throughput.
public enum NetworkSpeedTier: String, Sendable, CaseIterable, Comparable {
    /// Below 3 Mbit/s.
    case slow
    /// 3 to 20 Mbit/s.
    case normal
    /// 20 to 100 Mbit/s.
    case fast
    /// 100 Mbit/s and above (5.5G): parallelism, not I/O tricks.
    case ultrafast

    /// The tier of a throughput in Mbit/s.
    public init(megabitsPerSecond mbps: Double) {
        if mbps >= UploadConstants.networkSpeedUltrafastMbps {
            self = .ultrafast
        } else if mbps >= UploadConstants.networkSpeedFastMbps {
            self = .fast
        } else if mbps >= UploadConstants.networkSpeedSlowMbps {
            self = .normal
        } else {
            self = .slow
        }
    }

    /// Orders tiers from slow to ultrafast.
    public static func < (lhs: NetworkSpeedTier, rhs: NetworkSpeedTier) -> Bool {
        lhs.rank < rhs.rank
    }

    private var rank: Int {
        switch self {
        case .slow: 0
        case .normal: 1
        case .fast: 2
        case .ultrafast: 3
        }
    }

    /// The tier's strategy; `availableMemoryBytes` (nil when unknown) gates ULTRAFAST prefetch.
    public func strategy(availableMemoryBytes: Int64?) -> TierStrategy {
        UploadConstants.assertValid()
        switch self {
        case .ultrafast:
            let prefetch = (availableMemoryBytes ?? 0) > UploadConstants.ultrafastPrefetchMemoryBytes
            return TierStrategy(
                tier: self, parallelChunks: UploadConstants.maxParallelChunkUploadsUltrafast,
                chunkSizeBytes: UploadConstants.chunkSizeMaxBytes, erasureCodingEnabled: false,
                compressionEnabled: false, prefetchChunks: prefetch ? UploadConstants.ultrafastPrefetchChunkCount : 0)
        case .fast:
            return TierStrategy(
                tier: self, parallelChunks: UploadConstants.maxParallelChunkUploads, chunkSizeBytes: 8 * 1024 * 1024,
                erasureCodingEnabled: false, compressionEnabled: true, prefetchChunks: 0)
        case .normal:
            return TierStrategy(
                tier: self, parallelChunks: UploadConstants.maxParallelChunkUploads, chunkSizeBytes: 2 * 1024 * 1024,
                erasureCodingEnabled: true, compressionEnabled: true, prefetchChunks: 0)
        case .slow:
            return TierStrategy(
                tier: self, parallelChunks: UploadConstants.maxParallelChunkUploads,
                chunkSizeBytes: UploadConstants.chunkSizeMinBytes * 2, erasureCodingEnabled: true,
                compressionEnabled: true, prefetchChunks: 0)
        }
    }
}
