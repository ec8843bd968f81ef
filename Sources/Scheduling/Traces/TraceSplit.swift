/// The fixed train/test split of the throughput traces, by trace, and their network generation.
///
/// Within each family (trace folder), traces sorted by name: even positions (0, 2, ...) train and tune, odd positions
/// are held out. A trace is a file, except in the 5Gophers CSV, whose 120 independent runs are traces of their own.
/// Nothing fitted or tuned (the Kalman parameters, `LogLagModel.trained`) has seen a held-out trace.
public enum TraceSplit {
    /// The network generation of a trace family, for per-generation summaries.
    public enum Generation: String, Sendable, CaseIterable {
        /// HSDPA (`hsdpa_*`).
        case threeG = "3G"
        /// LTE (`lte_*`).
        case lte = "LTE"
        /// 5G NR (`nr5g_*`).
        case fiveG = "5G"
    }

    /// The generation named by a family's prefix (`hsdpa_`, `lte_`, `nr5g_`), nil for another name.
    public static func generation(ofFamily family: String) -> Generation? {
        if family.hasPrefix("hsdpa_") { return .threeG }
        if family.hasPrefix("lte_") { return .lte }
        if family.hasPrefix("nr5g_") { return .fiveG }
        return nil
    }

    /// Every trace with whether it is held out, families in first-seen order, traces by name within a family.
    public static func assign(_ traces: [ThroughputTrace]) -> [(trace: ThroughputTrace, heldOut: Bool)] {
        var families: [String] = []
        for trace in traces where !families.contains(trace.family) { families.append(trace.family) }
        var result: [(trace: ThroughputTrace, heldOut: Bool)] = []
        for family in families {
            let members = traces.filter { $0.family == family }.sorted { $0.name < $1.name }
            for (position, trace) in members.enumerated() { result.append((trace, position % 2 == 1)) }
        }
        return result
    }

    /// The training half.
    public static func training(_ traces: [ThroughputTrace]) -> [ThroughputTrace] {
        assign(traces).filter { !$0.heldOut }.map(\.trace)
    }

    /// The held-out half.
    public static func heldOut(_ traces: [ThroughputTrace]) -> [ThroughputTrace] {
        assign(traces).filter(\.heldOut).map(\.trace)
    }
}
