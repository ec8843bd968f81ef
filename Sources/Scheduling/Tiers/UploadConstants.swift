/// The scheduling constants of upload-engine v2.2 (section "Constants Update v2.2"), with their validation.
///
/// v2.2 changes: `networkSpeedUltrafastMbps` 200 → 100 (correction), parallel uploads 8 for ULTRAFAST only
/// (correction; 6 elsewhere), and three new constants (prefetch count, stability threshold and sample count).
public enum UploadConstants {
    /// Smallest chunk the native protocol sends (256 KiB).
    public static let chunkSizeMinBytes = 256 * 1024
    /// Largest chunk (16 MiB: bigger chunks raise the cost of a failed request).
    public static let chunkSizeMaxBytes = 16 * 1024 * 1024
    /// Chunk sizes are multiples of this (16 KiB, the largest common page size).
    public static let chunkAlignmentBytes = 16 * 1024
    /// Uplink rate at or above which the ULTRAFAST tier applies (v2.2: lowered from 200).
    public static let networkSpeedUltrafastMbps = 100.0
    /// Uplink rate at or above which the FAST tier applies.
    public static let networkSpeedFastMbps = 20.0
    /// Uplink rate below which the SLOW tier applies.
    public static let networkSpeedSlowMbps = 3.0
    /// Parallel chunk uploads in the ULTRAFAST tier.
    public static let maxParallelChunkUploadsUltrafast = 8
    /// Parallel chunk uploads in every other tier (more streams contend for one connection).
    public static let maxParallelChunkUploads = 6
    /// Read-ahead chunks in the ULTRAFAST tier.
    public static let ultrafastPrefetchChunkCount = 3
    /// Available memory above which ULTRAFAST prefetch is enabled (200 MB).
    public static let ultrafastPrefetchMemoryBytes: Int64 = 200 * 1_000_000
    /// Coefficient of variation below which the transport's congestion control is deemed stable.
    public static let transportStabilityThreshold = 0.05
    /// Consecutive low-variance samples that declare transport stability.
    public static let transportStabilitySampleCount = 10

    /// The constants as one value, so validation can be tested against broken sets.
    public struct Values: Sendable, Equatable {
        /// See `UploadConstants.chunkSizeMinBytes`.
        public var chunkSizeMinBytes = UploadConstants.chunkSizeMinBytes
        /// See `UploadConstants.chunkSizeMaxBytes`.
        public var chunkSizeMaxBytes = UploadConstants.chunkSizeMaxBytes
        /// See `UploadConstants.chunkAlignmentBytes`.
        public var chunkAlignmentBytes = UploadConstants.chunkAlignmentBytes
        /// See `UploadConstants.networkSpeedUltrafastMbps`.
        public var networkSpeedUltrafastMbps = UploadConstants.networkSpeedUltrafastMbps
        /// See `UploadConstants.networkSpeedFastMbps`.
        public var networkSpeedFastMbps = UploadConstants.networkSpeedFastMbps
        /// See `UploadConstants.networkSpeedSlowMbps`.
        public var networkSpeedSlowMbps = UploadConstants.networkSpeedSlowMbps
        /// See `UploadConstants.maxParallelChunkUploadsUltrafast`.
        public var maxParallelChunkUploadsUltrafast = UploadConstants.maxParallelChunkUploadsUltrafast
        /// See `UploadConstants.maxParallelChunkUploads`.
        public var maxParallelChunkUploads = UploadConstants.maxParallelChunkUploads
        /// See `UploadConstants.ultrafastPrefetchChunkCount`.
        public var ultrafastPrefetchChunkCount = UploadConstants.ultrafastPrefetchChunkCount
        /// See `UploadConstants.transportStabilityThreshold`.
        public var transportStabilityThreshold = UploadConstants.transportStabilityThreshold
        /// See `UploadConstants.transportStabilitySampleCount`.
        public var transportStabilitySampleCount = UploadConstants.transportStabilitySampleCount

        /// The shipped constants.
        public init() {}
    }

    /// The rules of the spec's `UploadConstantsValidation` plus the ordering the tiers rely on; throws
    /// `invalidConstant` naming the first broken rule.
    public static func validate(_ values: Values = Values()) throws(SchedulingError) {
        func require(_ condition: Bool, _ message: String) throws(SchedulingError) {
            if !condition { throw SchedulingError(.invalidConstant, message) }
        }
        try require(values.ultrafastPrefetchChunkCount >= 1, "Must prefetch at least 1 chunk for ULTRAFAST")
        try require(
            values.ultrafastPrefetchChunkCount <= 5, "Prefetching > 5 chunks uses too much memory (5 × 16MB = 80MB)")
        try require(
            values.transportStabilityThreshold > 0 && values.transportStabilityThreshold < 1,
            "Stability threshold must be between 0 and 1")
        try require(values.transportStabilitySampleCount >= 1, "Stability needs at least one sample")
        try require(values.networkSpeedUltrafastMbps == 100, "NETWORK_SPEED_ULTRAFAST_MBPS is 100 since v2.2")
        try require(
            values.networkSpeedSlowMbps > 0 && values.networkSpeedSlowMbps < values.networkSpeedFastMbps
                && values.networkSpeedFastMbps < values.networkSpeedUltrafastMbps,
            "Tier thresholds must rise: slow < fast < ultrafast")
        try require(values.maxParallelChunkUploadsUltrafast == 8, "ULTRAFAST runs 8 parallel uploads")
        try require(values.maxParallelChunkUploads == 6, "Tiers other than ULTRAFAST keep 6 parallel uploads")
        try require(
            values.chunkAlignmentBytes > 0 && values.chunkAlignmentBytes & (values.chunkAlignmentBytes - 1) == 0,
            "Chunk alignment must be a power of two")
        try require(
            values.chunkSizeMinBytes % values.chunkAlignmentBytes == 0
                && values.chunkSizeMaxBytes % values.chunkAlignmentBytes == 0,
            "Chunk size bounds must be aligned")
        try require(values.chunkSizeMinBytes < values.chunkSizeMaxBytes, "Minimum chunk must be below maximum")
        try require(values.chunkSizeMaxBytes == 16 * 1024 * 1024, "CHUNK_SIZE_MAX is 16 MiB")
    }

    /// Debug builds assert the shipped constants once (the spec's `#if DEBUG` validation); release builds skip it.
    public static func assertValid() {
        #if DEBUG
            do {
                try validate()
            } catch {
                assertionFailure("\(error)")
            }
        #endif
    }
}
