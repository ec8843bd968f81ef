import Testing

@testable import AetherScheduling

@Suite struct UploadConstantsTests {
    @Test func shippedConstantsPassValidation() throws {
        try UploadConstants.validate()
        UploadConstants.assertValid()
    }

    @Test func v22CorrectionsAndAdditionsHaveTheirValues() {
        #expect(UploadConstants.networkSpeedUltrafastMbps == 100)
        #expect(UploadConstants.maxParallelChunkUploadsUltrafast == 8)
        #expect(UploadConstants.maxParallelChunkUploads == 6)
        #expect(UploadConstants.ultrafastPrefetchChunkCount == 3)
        #expect(UploadConstants.transportStabilityThreshold == 0.05)
        #expect(UploadConstants.transportStabilitySampleCount == 10)
        #expect(UploadConstants.chunkSizeMaxBytes == 16 * 1024 * 1024)
        #expect(UploadConstants.chunkAlignmentBytes == 16 * 1024)
    }

    static let broken: [(String, @Sendable (inout UploadConstants.Values) -> Void)] = [
        ("prefetch 0", { $0.ultrafastPrefetchChunkCount = 0 }),
        ("prefetch 6", { $0.ultrafastPrefetchChunkCount = 6 }),
        ("threshold 0", { $0.transportStabilityThreshold = 0 }),
        ("threshold 1", { $0.transportStabilityThreshold = 1 }),
        ("samples 0", { $0.transportStabilitySampleCount = 0 }),
        ("ultrafast 200", { $0.networkSpeedUltrafastMbps = 200 }),
        ("tiers out of order", { $0.networkSpeedFastMbps = 150 }),
        ("ultrafast parallel 6", { $0.maxParallelChunkUploadsUltrafast = 6 }),
        ("default parallel 8", { $0.maxParallelChunkUploads = 8 }),
        ("alignment not power of two", { $0.chunkAlignmentBytes = 12_000 }),
        ("min not aligned", { $0.chunkSizeMinBytes = 256 * 1024 + 1 }),
        ("min above max", { $0.chunkSizeMinBytes = 32 * 1024 * 1024 }),
        ("max 32 MiB", { $0.chunkSizeMaxBytes = 32 * 1024 * 1024 }),
    ]

    @Test(arguments: 0..<broken.count)
    func eachBrokenRuleIsRejected(index: Int) {
        var values = UploadConstants.Values()
        Self.broken[index].1(&values)
        #expect(throws: SchedulingError.self, "\(Self.broken[index].0)") { try UploadConstants.validate(values) }
        do {
            try UploadConstants.validate(values)
        } catch {
            #expect(error.code == .invalidConstant)
        }
    }

    @Test(arguments: [
        (0.5, NetworkSpeedTier.slow), (3, .normal), (19.9, .normal), (20, .fast), (99.9, .fast), (100, .ultrafast),
        (900, .ultrafast),
    ])
    func tiersFollowTheThresholds(mbps: Double, tier: NetworkSpeedTier) {
        #expect(NetworkSpeedTier(megabitsPerSecond: mbps) == tier)
    }

    @Test func ultrafastStrategyIsParallelismNotIOTricks() {
        let strategy = NetworkSpeedTier.ultrafast.strategy(availableMemoryBytes: 1 << 30)
        #expect(strategy.parallelChunks == 8)
        #expect(strategy.chunkSizeBytes == 16 * 1024 * 1024)
        #expect(!strategy.erasureCodingEnabled)
        #expect(!strategy.compressionEnabled)
        #expect(strategy.prefetchChunks == 3)
    }

    @Test(arguments: [(Int64?.none, 0), (200_000_000, 0), (200_000_001, 3), (8 << 30, 3)])
    func ultrafastPrefetchNeedsMoreThan200MB(memory: Int64?, prefetch: Int) {
        #expect(NetworkSpeedTier.ultrafast.strategy(availableMemoryBytes: memory).prefetchChunks == prefetch)
    }

    @Test func otherTiersKeepSixStreamsAndNoPrefetch() {
        for tier in [NetworkSpeedTier.slow, .normal, .fast] {
            let strategy = tier.strategy(availableMemoryBytes: 8 << 30)
            #expect(strategy.parallelChunks == 6)
            #expect(strategy.prefetchChunks == 0)
        }
        #expect(NetworkSpeedTier.slow < .ultrafast)
    }
}
