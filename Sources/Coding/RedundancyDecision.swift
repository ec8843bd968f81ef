/// How a group of chunks should be protected on the current link.
public enum RedundancyDecision: Sendable, Hashable, CustomStringConvertible {
    /// No parity: the link is ULTRAFAST (spec: erasure coding is not needed on an ultra-reliable link) or
    /// lossless enough that the target holds without it.
    case none
    /// Systematic Reed-Solomon with this many data and parity shards.
    case reedSolomon(dataShards: Int, parityShards: Int)
    /// Loss is above what Reed-Solomon should carry (spec: > 8%): use the rateless fountain fallback.
    case fountain

    public var description: String {
        switch self {
        case .none: "none"
        case .reedSolomon(let k, let m): "reedSolomon(k=\(k), m=\(m))"
        case .fountain: "fountain"
        }
    }
}
