/// The parameters of a systematic Reed-Solomon erasure code: k data shards, m parity shards of the same
/// length, any k of the k + m enough to rebuild the data.
///
/// The encoding matrix is ISA-L's Cauchy construction (`gf_gen_cauchy1_matrix`, see `GFMatrix`), so
/// GF(2^8) parity is byte-identical to ISA-L's `ec_encode_data` for the same k and m.
public struct ReedSolomonCode: Sendable, Hashable, CustomStringConvertible {
    /// k, the number of data shards.
    public let dataShards: Int
    /// m, the number of parity shards.
    public let parityShards: Int
    /// The field: GF(2^8) up to 256 shards, GF(2^16) above (spec: GF(2^16) only when needed).
    public let field: ReedSolomonField

    /// k + m.
    public var totalShards: Int { dataShards + parityShards }

    /// A code with `dataShards` = k >= 1 and `parityShards` = m >= 0. Without `field`, GF(2^8) when
    /// k + m <= 256 and GF(2^16) otherwise. k + m above the field's limit is `.invalidParameters`.
    public init(dataShards: Int, parityShards: Int, field: ReedSolomonField? = nil) throws(CodingError) {
        guard dataShards >= 1 else {
            throw CodingError(.invalidParameters, "a code needs at least one data shard, got \(dataShards)")
        }
        guard parityShards >= 0 else {
            throw CodingError(.invalidParameters, "parity shard count cannot be negative, got \(parityShards)")
        }
        let total = dataShards.addingReportingOverflow(parityShards)
        let chosen = field ?? (!total.overflow && total.partialValue <= 256 ? .gf256 : .gf65536)
        guard !total.overflow, total.partialValue <= chosen.maximumShards else {
            throw CodingError(
                .invalidParameters,
                "k + m = \(dataShards) + \(parityShards) exceeds \(chosen.maximumShards) shards for \(chosen)")
        }
        self.dataShards = dataShards
        self.parityShards = parityShards
        self.field = chosen
    }

    /// Entry (row, column) of the (k + m) x k encoding matrix: the identity on rows 0..<k, then
    /// 1 / (row XOR column) in the code's field.
    public func encodingCoefficient(row: Int, column: Int) -> Int {
        precondition(row >= 0 && row < totalShards && column >= 0 && column < dataShards, "entry outside the matrix")
        if row < dataShards { return row == column ? 1 : 0 }
        switch field {
        case .gf256: return Int(GF256.inverse(UInt8(row ^ column)))
        case .gf65536: return Int(GF65536.inverse(UInt16(row ^ column)))
        }
    }

    /// Checks a shard length against the field's symbol size.
    func validate(shardLength: Int) throws(CodingError) {
        guard shardLength >= 0, shardLength % field.symbolSize == 0 else {
            throw CodingError(
                .shardSizeMismatch, "shard length \(shardLength) is not a multiple of \(field.symbolSize) for \(field)")
        }
    }

    public var description: String { "RS(k=\(dataShards), m=\(parityShards), \(field))" }
}
