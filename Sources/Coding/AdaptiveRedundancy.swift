#if canImport(Glibc)
    import Glibc
#endif

/// Chooses the parity count for a group of k data shards from the measured loss rate (spec:
/// ErasureCodingEngine "adaptive redundancy per loss rate", "RaptorQ fallback at > 8% loss").
///
/// Model: each of the n = k + m shards of a group is lost independently with probability p; the group
/// fails when more than m are lost, so its failure probability is the binomial tail
///
///     P(fail) = sum over i = m+1...n of C(n, i) p^i (1 - p)^(n - i)
///
/// and m is the smallest count with P(fail) <= the target.
public enum AdaptiveRedundancy {
    /// Loss rate above which Reed-Solomon gives way to the fountain fallback (spec: 8%).
    public static let fountainLossThreshold = 0.08

    /// The default target failure probability per group.
    public static let defaultTargetFailureProbability = 1e-6

    /// The probability that more than `parityShards` of the k + m shards are lost.
    public static func groupFailureProbability(
        dataShards: Int, parityShards: Int, lossRate: Double
    ) throws(CodingError) -> Double {
        try validate(dataShards: dataShards, lossRate: lossRate)
        guard parityShards >= 0 else { throw CodingError(.invalidParameters, "parity shard count cannot be negative") }
        let n = dataShards + parityShards
        if lossRate == 0 { return 0 }
        if lossRate == 1 { return 1 }
        // Sum the pmf in log space: C(n, i) p^i (1-p)^(n-i) underflows a Double term by term for large n.
        let logP = log(lossRate)
        let logQ = log1p(-lossRate)
        var logChoose = 0.0  // log C(n, i), built up from i = 0
        var tail = 0.0
        for i in 0...n {
            if i > 0 { logChoose += log(Double(n - i + 1)) - log(Double(i)) }
            if i > parityShards { tail += exp(logChoose + Double(i) * logP + Double(n - i) * logQ) }
        }
        return min(tail, 1)
    }

    /// The smallest m whose group failure probability is at most `targetFailureProbability`, or nil
    /// when even k + m = `maximumTotalShards` does not reach it.
    public static func parityShards(
        dataShards: Int, lossRate: Double, targetFailureProbability: Double = defaultTargetFailureProbability,
        maximumTotalShards: Int = ReedSolomonField.gf65536.maximumShards
    ) throws(CodingError) -> Int? {
        try validate(dataShards: dataShards, lossRate: lossRate)
        guard targetFailureProbability > 0, targetFailureProbability < 1 else {
            throw CodingError(.invalidParameters, "target failure probability must be in (0, 1)")
        }
        var m = 0
        while dataShards + m <= maximumTotalShards {
            let failure = try groupFailureProbability(dataShards: dataShards, parityShards: m, lossRate: lossRate)
            if failure <= targetFailureProbability { return m }
            m += 1
        }
        return nil
    }

    /// The spec's policy: no parity on an ULTRAFAST link; Reed-Solomon with the binomial m up to 8% loss;
    /// the fountain fallback above 8% (or when Reed-Solomon cannot reach the target within 65,536 shards).
    public static func decide(
        dataShards: Int, lossRate: Double, targetFailureProbability: Double = defaultTargetFailureProbability,
        ultrafastLink: Bool
    ) throws(CodingError) -> RedundancyDecision {
        try validate(dataShards: dataShards, lossRate: lossRate)
        if ultrafastLink { return .none }
        if lossRate > fountainLossThreshold { return .fountain }
        guard
            let m = try parityShards(
                dataShards: dataShards, lossRate: lossRate, targetFailureProbability: targetFailureProbability)
        else { return .fountain }
        return m == 0 ? .none : .reedSolomon(dataShards: dataShards, parityShards: m)
    }

    static func validate(dataShards: Int, lossRate: Double) throws(CodingError) {
        guard dataShards >= 1, dataShards <= ReedSolomonField.gf65536.maximumShards else {
            throw CodingError(.invalidParameters, "data shard count \(dataShards) is outside 1...65536")
        }
        guard lossRate.isFinite, lossRate >= 0, lossRate <= 1 else {
            throw CodingError(.invalidParameters, "loss rate must be in [0, 1], got \(lossRate)")
        }
    }
}
