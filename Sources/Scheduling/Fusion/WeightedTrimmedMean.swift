/// Weighted trimmed mean: sort the candidates by value, cut `trim` of the total weight from each end, and average
/// what is left by weight. `trim` = 0 is the weighted mean; `trim` → 0.5 tends to the weighted median.
public enum WeightedTrimmedMean {
    /// The trimmed mean of `(value, weight)` pairs; non-positive or non-finite weights are ignored.
    /// Returns nil when no candidate carries weight.
    public static func of(_ candidates: [(value: Double, weight: Double)], trim: Double) -> Double? {
        let usable = candidates.filter { $0.weight > 0 && $0.weight.isFinite && $0.value.isFinite }
            .sorted { $0.value < $1.value }
        let total = usable.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return nil }
        let cut = min(max(trim, 0), 0.499) * total
        let low = cut
        let high = total - cut
        var position = 0.0
        var sum = 0.0
        var kept = 0.0
        for candidate in usable {
            let from = max(position, low)
            let to = min(position + candidate.weight, high)
            if to > from {
                sum += candidate.value * (to - from)
                kept += to - from
            }
            position += candidate.weight
        }
        return kept > 0 ? sum / kept : usable[usable.count / 2].value
    }

    /// The weighted mean after clamping every candidate into [k-th smallest, k-th largest] value (a winsorized
    /// trimmed mean). Unlike cutting weight mass, this keeps each controller's weight fixed, so when every
    /// candidate grows with some input the result grows too. Returns nil when no candidate carries weight.
    public static func winsorized(_ candidates: [(value: Double, weight: Double)], trimCount k: Int) -> Double? {
        let usable = candidates.filter { $0.weight > 0 && $0.weight.isFinite && $0.value.isFinite }
        guard !usable.isEmpty else { return nil }
        let sorted = usable.map(\.value).sorted()
        let cut = min(max(0, k), (sorted.count - 1) / 2)
        let low = sorted[cut]
        let high = sorted[sorted.count - 1 - cut]
        let total = usable.reduce(0) { $0 + $1.weight }
        return usable.reduce(0) { $0 + min(high, max(low, $1.value)) * $1.weight } / total
    }
}
