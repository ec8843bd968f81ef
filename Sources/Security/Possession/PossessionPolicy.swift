/// How many questions of each kind a challenge asks.
public struct PossessionPolicy: Sendable, Hashable {
    /// Ask for the HMAC of the whole content.
    public var includeFullHash: Bool
    /// Ranges at random offsets.
    public var rangeCount: Int
    /// Length of each range (capped at the content size).
    public var rangeLength: UInt32
    /// Distinct random chunks whose inclusion proof and HMAC are asked.
    public var merkleChunkCount: Int

    /// A policy.
    public init(
        includeFullHash: Bool = true, rangeCount: Int = 3, rangeLength: UInt32 = 4096, merkleChunkCount: Int = 3
    ) {
        self.includeFullHash = includeFullHash
        self.rangeCount = rangeCount
        self.rangeLength = rangeLength
        self.merkleChunkCount = merkleChunkCount
    }
}
