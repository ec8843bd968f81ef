/// Convenience encode and decode on arrays of shards. These allocate; hot paths use `ShardStripe`
/// with a long-lived `ReedSolomonEncoder` or `ReedSolomonDecoder`.
extension ReedSolomonCode {
    /// The m parity shards of the k equal-length `data` shards.
    public func encode(_ data: [[UInt8]]) throws(CodingError) -> [[UInt8]] {
        try ReedSolomonEncoder(code: self).encode(data)
    }

    /// Fills in the missing (nil) entries of `shards` (k + m entries, survivors all the same length):
    /// the missing data shards always, the missing parity shards too when `includingParity`.
    public func reconstruct(_ shards: inout [[UInt8]?], includingParity: Bool = false) throws(CodingError) {
        guard shards.count == totalShards else {
            throw CodingError(.invalidParameters, "expected \(totalShards) shard slots, got \(shards.count)")
        }
        let lengths = Set(shards.compactMap { $0?.count })
        guard lengths.count <= 1 else { throw CodingError(.shardSizeMismatch, "surviving shards differ in length") }
        let decoder = try ReedSolomonDecoder(code: self, present: shards.map { $0 != nil })
        let length = lengths.first ?? 0
        let stripe = try ShardStripe(code: self, shardCapacity: length)
        for index in decoder.inputShards {
            if let shard = shards[index] { try stripe.setShard(index, to: shard) }
        }
        try decoder.reconstruct(stripe, shardLength: length, includingParity: includingParity)
        for index in decoder.missingDataShards { shards[index] = stripe.bytes(ofShard: index) }
        if includingParity {
            for index in decoder.missingParityShards { shards[index] = stripe.bytes(ofShard: index) }
        }
    }

    /// The k data shards, rebuilt from `shards` (k + m entries, nil where missing).
    public func decode(_ shards: [[UInt8]?]) throws(CodingError) -> [[UInt8]] {
        var working = shards
        try reconstruct(&working)
        return working.prefix(dataShards).map { $0 ?? [] }
    }
}
