/// Unequal error protection: the redundancy for a group of `DataPriority` content (table on
/// `DataPriority`), under the same link policy as `AdaptiveRedundancy`.
public enum UnequalErrorProtection {
    /// No parity on ULTRAFAST links and the fountain above 8% loss, for every priority; otherwise
    /// m = max(binomial m for the priority's target, ceil(k x its minimum ratio)), capped so that the
    /// code stays within GF(2^16).
    public static func decide(
        priority: DataPriority, dataShards: Int, lossRate: Double, ultrafastLink: Bool
    ) throws(CodingError) -> RedundancyDecision {
        let base = try AdaptiveRedundancy.decide(
            dataShards: dataShards, lossRate: lossRate,
            targetFailureProbability: priority.targetFailureProbability, ultrafastLink: ultrafastLink)
        let floor = Int((Double(dataShards) * priority.minimumParityRatio).rounded(.up))
        let cap = ReedSolomonField.gf65536.maximumShards - dataShards
        switch base {
        case .fountain:
            return .fountain
        case .none:
            if ultrafastLink || floor == 0 { return .none }
            return .reedSolomon(dataShards: dataShards, parityShards: min(floor, cap))
        case .reedSolomon(let k, let m):
            return .reedSolomon(dataShards: k, parityShards: min(max(m, floor), cap))
        }
    }
}
