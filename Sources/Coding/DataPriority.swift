/// The six priority levels of unequal error protection (spec: "UEP per priority level", the 6-level
/// priority queue): higher priority, stricter failure target, more parity.
///
/// | level | priority    | example content                              | target P(group lost) | min parity / k |
/// |-------|-------------|----------------------------------------------|----------------------|----------------|
/// | 0     | critical    | manifests, file headers, Merkle metadata      | 1e-9                 | 50%            |
/// | 1     | high        | scan keyframes, index structures             | 1e-7                 | 25%            |
/// | 2     | elevated    | geometry of the current capture              | 1e-6                 | 12.5%          |
/// | 3     | normal      | ordinary file chunks                         | 1e-5                 | 0%             |
/// | 4     | low         | textures, previews that can be re-derived    | 1e-4                 | 0%             |
/// | 5     | background  | bulk data that is cheap to re-send           | 1e-3                 | 0%             |
///
/// The minimum ratio keeps some parity on important groups even when the measured loss is near zero,
/// since a loss estimate lags the link. Parity is m = max(binomial m for the target, ceil(k x ratio)).
public enum DataPriority: Int, Sendable, Hashable, CaseIterable, Comparable {
    /// Level 0: losing it loses the whole upload.
    case critical = 0
    /// Level 1.
    case high = 1
    /// Level 2.
    case elevated = 2
    /// Level 3: the default.
    case normal = 3
    /// Level 4.
    case low = 4
    /// Level 5: cheapest to re-send.
    case background = 5

    /// The target probability that a group of this priority cannot be rebuilt.
    public var targetFailureProbability: Double {
        switch self {
        case .critical: 1e-9
        case .high: 1e-7
        case .elevated: 1e-6
        case .normal: 1e-5
        case .low: 1e-4
        case .background: 1e-3
        }
    }

    /// The least parity, as a fraction of k, whenever coding is on.
    public var minimumParityRatio: Double {
        switch self {
        case .critical: 0.5
        case .high: 0.25
        case .elevated: 0.125
        case .normal, .low, .background: 0
        }
    }

    /// Higher priority sorts first (critical < high < ... < background).
    public static func < (lhs: DataPriority, rhs: DataPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}
