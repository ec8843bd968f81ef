/// What `ErasureCodedFile.decode` found and did.
public struct ShardFileDecodeReport: Sendable, Equatable {
    /// The index the shards were checked against.
    public let index: ShardIndex
    /// The k shards the file was rebuilt from (all verified against their digests).
    public let inputShards: [Int]
    /// Data shards that were rebuilt from parity.
    public let rebuiltDataShards: [Int]
    /// Shards whose file is missing.
    public let missingShards: [Int]
    /// Shards whose file has the wrong size (treated as erased).
    public let wrongSizeShards: [Int]
    /// Shards whose content does not match the index digest (treated as erased).
    public let corruptShards: [Int]
}
