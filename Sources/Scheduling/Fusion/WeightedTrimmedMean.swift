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
}
