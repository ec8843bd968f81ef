/// What a tier does: the starting point the fusion scheduler adapts from, and its hard caps.
public struct TierStrategy: Sendable, Equatable {
    /// The tier.
    public let tier: NetworkSpeedTier
    /// Maximum parallel chunk uploads.
    public let parallelChunks: Int
    /// Starting chunk size.
    public let chunkSizeBytes: Int
    /// Whether parity chunks are sent.
    public let erasureCodingEnabled: Bool
    /// Whether compressible chunks are compressed.
    public let compressionEnabled: Bool
    /// Chunks read ahead of the network.
    public let prefetchChunks: Int
}
