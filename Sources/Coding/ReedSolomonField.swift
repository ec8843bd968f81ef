/// The Galois field a Reed-Solomon code computes in.
public enum ReedSolomonField: Sendable, Hashable, CustomStringConvertible {
    /// GF(2^8), polynomial 0x11D: up to 256 shards, one-byte symbols, the SIMD kernel (spec: the default).
    case gf256
    /// GF(2^16), polynomial 0x1100B: up to 65,536 shards, two-byte little-endian symbols, portable kernel.
    case gf65536

    /// The most shards (k + m) a code over this field can have.
    public var maximumShards: Int {
        switch self {
        case .gf256: 256
        case .gf65536: 65536
        }
    }

    /// Bytes per symbol; shard lengths are a multiple of it.
    public var symbolSize: Int {
        switch self {
        case .gf256: 1
        case .gf65536: 2
        }
    }

    public var description: String {
        switch self {
        case .gf256: "GF(2^8)"
        case .gf65536: "GF(2^16)"
        }
    }
}
