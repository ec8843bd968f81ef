/// Rebuilds the missing shards of a `ReedSolomonCode` for one erasure pattern from any k survivors.
///
/// The k x k submatrix of the encoding matrix for the shards it reads is inverted once at init
/// (Gauss-Jordan over the field); each missing data shard d is then row d of that inverse applied to the
/// survivors, and each missing parity shard p is (encoding row p) x inverse. Like the encoder it is built
/// once and reused for every stripe with the same pattern, and `reconstruct` allocates nothing.
public final class ReedSolomonDecoder: Sendable {
    /// The code.
    public let code: ReedSolomonCode
    /// The k shard indices read as input (the lowest-numbered survivors, so data shards first).
    public let inputShards: [Int]
    /// The data shards that were missing, which `reconstruct` always rebuilds.
    public let missingDataShards: [Int]
    /// The parity shards that were missing, rebuilt only when asked.
    public let missingParityShards: [Int]

    private let dataTransform: RegionTransform
    private let parityTransform: RegionTransform

    /// A decoder for the pattern `present` (one flag per shard, k + m of them). Fewer than k present
    /// shards is `.tooFewShards`.
    public init(code: ReedSolomonCode, present: [Bool], kernel: ReedSolomonKernel = .automatic) throws(CodingError) {
        guard present.count == code.totalShards else {
            throw CodingError(.invalidParameters, "expected \(code.totalShards) presence flags, got \(present.count)")
        }
        let survivors = present.indices.filter { present[$0] }
        guard survivors.count >= code.dataShards else {
            throw CodingError(
                .tooFewShards, "\(survivors.count) shards survive; \(code) needs \(code.dataShards) to decode")
        }
        self.code = code
        let k = code.dataShards
        let inputs = Array(survivors.prefix(k))
        inputShards = inputs
        missingDataShards = (0..<k).filter { !present[$0] }
        missingParityShards = (k..<code.totalShards).filter { !present[$0] }
        switch code.field {
        case .gf256:
            let (data, parity) = try Self.rows(
                GFMatrix<GF256>.self, code: code, inputs: inputs, data: missingDataShards, parity: missingParityShards)
            dataTransform = RegionTransform(data, kernel: kernel)
            parityTransform = RegionTransform(parity, kernel: kernel)
        case .gf65536:
            let (data, parity) = try Self.rows(
                GFMatrix<GF65536>.self, code: code, inputs: inputs, data: missingDataShards,
                parity: missingParityShards)
            dataTransform = RegionTransform(data)
            parityTransform = RegionTransform(parity)
        }
    }

    private static func rows<Field>(
        _: GFMatrix<Field>.Type, code: ReedSolomonCode, inputs: [Int], data: [Int], parity: [Int]
    ) throws(CodingError) -> (GFMatrix<Field>, GFMatrix<Field>) {
        let encoding = GFMatrix<Field>.cauchyEncoding(dataShards: code.dataShards, totalShards: code.totalShards)
        let inverse = try encoding.selectingRows(inputs).inverted()
        return (inverse.selectingRows(data), encoding.selectingRows(parity).multiplied(by: inverse))
    }

    /// Whether this decoder runs the SIMD kernel.
    public var usesSIMD: Bool { dataTransform.usesSIMD }

    /// Rebuilds the missing data shards of `stripe` (and the missing parity shards when
    /// `includingParity`) over the first `shardLength` bytes, reading only `inputShards`.
    public func reconstruct(_ stripe: ShardStripe, shardLength: Int, includingParity: Bool = false) throws(CodingError)
    {
        guard stripe.shardCount == code.totalShards else {
            throw CodingError(
                .invalidParameters, "stripe has \(stripe.shardCount) shards, \(code) needs \(code.totalShards)")
        }
        guard shardLength <= stripe.shardCapacity else {
            throw CodingError(.shardSizeMismatch, "shard length \(shardLength) exceeds the stripe's capacity")
        }
        try code.validate(shardLength: shardLength)
        for (slot, index) in inputShards.enumerated() {
            unsafe stripe.inputPointers[slot] = UnsafePointer(stripe.pointer(index))
        }
        for (slot, index) in missingDataShards.enumerated() {
            unsafe stripe.outputPointers[slot] = stripe.pointer(index)
        }
        unsafe dataTransform.apply(length: shardLength, inputs: stripe.inputPointers, outputs: stripe.outputPointers)
        guard includingParity else { return }
        for (slot, index) in missingParityShards.enumerated() {
            unsafe stripe.outputPointers[slot] = stripe.pointer(index)
        }
        unsafe parityTransform.apply(length: shardLength, inputs: stripe.inputPointers, outputs: stripe.outputPointers)
    }
}
