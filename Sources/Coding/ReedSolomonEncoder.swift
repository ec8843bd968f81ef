/// Computes the m parity shards of a `ReedSolomonCode` from its k data shards.
///
/// Built once per code (it precomputes the SIMD nibble tables of the parity rows), then used for any
/// number of stripes from any number of tasks; `encode(_:shardLength:)` allocates nothing.
public final class ReedSolomonEncoder: Sendable {
    /// The code.
    public let code: ReedSolomonCode
    private let transform: RegionTransform

    /// An encoder for `code` using `kernel`.
    public init(code: ReedSolomonCode, kernel: ReedSolomonKernel = .automatic) {
        self.code = code
        let k = code.dataShards
        let n = code.totalShards
        switch code.field {
        case .gf256:
            let parityRows = GFMatrix<GF256>.cauchyEncoding(dataShards: k, totalShards: n).selectingRows(k..<n)
            transform = RegionTransform(parityRows, kernel: kernel)
        case .gf65536:
            let parityRows = GFMatrix<GF65536>.cauchyEncoding(dataShards: k, totalShards: n).selectingRows(k..<n)
            transform = RegionTransform(parityRows)
        }
    }

    /// Whether this encoder runs the SIMD kernel.
    public var usesSIMD: Bool { transform.usesSIMD }

    /// Writes parity shards k..<k+m of `stripe` from data shards 0..<k, over the first `shardLength` bytes.
    public func encode(_ stripe: ShardStripe, shardLength: Int) throws(CodingError) {
        try check(stripe, shardLength: shardLength)
        let k = code.dataShards
        for index in 0..<k { unsafe stripe.inputPointers[index] = UnsafePointer(stripe.pointer(index)) }
        for index in 0..<code.parityShards { unsafe stripe.outputPointers[index] = stripe.pointer(k + index) }
        unsafe transform.apply(length: shardLength, inputs: stripe.inputPointers, outputs: stripe.outputPointers)
    }

    /// The m parity shards of `data` (k shards of equal length). Allocates; for repeated work use a
    /// `ShardStripe`.
    public func encode(_ data: [[UInt8]]) throws(CodingError) -> [[UInt8]] {
        guard data.count == code.dataShards else {
            throw CodingError(.invalidParameters, "expected \(code.dataShards) data shards, got \(data.count)")
        }
        let length = data.first?.count ?? 0
        guard data.allSatisfy({ $0.count == length }) else {
            throw CodingError(.shardSizeMismatch, "data shards differ in length")
        }
        let stripe = try ShardStripe(code: code, shardCapacity: length)
        for (index, shard) in data.enumerated() { try stripe.setShard(index, to: shard) }
        try encode(stripe, shardLength: length)
        return (code.dataShards..<code.totalShards).map { stripe.bytes(ofShard: $0) }
    }

    private func check(_ stripe: ShardStripe, shardLength: Int) throws(CodingError) {
        guard stripe.shardCount == code.totalShards else {
            throw CodingError(
                .invalidParameters, "stripe has \(stripe.shardCount) shards, \(code) needs \(code.totalShards)")
        }
        guard shardLength <= stripe.shardCapacity else {
            throw CodingError(.shardSizeMismatch, "shard length \(shardLength) exceeds the stripe's capacity")
        }
        try code.validate(shardLength: shardLength)
    }
}
