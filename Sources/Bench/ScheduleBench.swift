import AetherScheduling

/// `aether-bench schedule [--traces DIR]`: completion time of a 1 GiB upload over every trace under the fusion
/// scheduler and three fixed policies (5 MiB sequential, tus-like; 8 MiB × 4, S3 SDK-like; 16 MiB × 8).
///
/// Link per family: 3G RTT 150 ms, failure 2 %; LTE 60 ms, 1 %; 5G 30 ms, 0.5 %. Per group the figure is the
/// sum of completion times over the group's traces; `ratio_vs_best_fixed` divides the fusion's by the best fixed
/// policy's. Groups: 3G, LTE, 5G by family, and `stable` (any trace with a throughput CV below 0.25). The held-out
/// traces (odd name positions within a family) are reported separately.
enum ScheduleBench: BenchSuite {
    static let name = "schedule"
    static let runsByDefault = false
    static let summary = "simulated 1 GiB upload times under the fusion scheduler over the traces"
    static let totalBytes: Int64 = 1 << 30
    static let mib = 1024 * 1024

    static func link(for family: String) -> UploadSimulator.Link {
        if family.hasPrefix("hsdpa") { return .init(roundTripTime: 0.15, failureProbability: 0.02) }
        if family.hasPrefix("lte") { return .init(roundTripTime: 0.06, failureProbability: 0.01) }
        return .init(roundTripTime: 0.03, failureProbability: 0.005)
    }

    static func group(for family: String) -> String {
        if family.hasPrefix("hsdpa") { return "3G" }
        if family.hasPrefix("lte") { return "LTE" }
        return "5G"
    }

    static let policyNames = ["ideal", "fusion", "fixed_5MiBx1", "fixed_8MiBx4", "fixed_16MiBx8"]

    /// Completion seconds per policy (in `policyNames` order) on one trace.
    static func simulate(_ trace: ThroughputTrace) -> [Double] {
        let link = link(for: trace.family)
        var seed: UInt64 = 1469598103934665603
        for byte in (trace.family + "/" + trace.name).utf8 { seed = (seed ^ UInt64(byte)) &* 1099511628211 }
        var fusion = UploadSimulator.FusionPolicy()
        var fixed = [
            UploadSimulator.FixedPolicy(name: "fixed_5MiBx1", chunk: 5 * mib, parallel: 1),
            UploadSimulator.FixedPolicy(name: "fixed_8MiBx4", chunk: 8 * mib, parallel: 4),
            UploadSimulator.FixedPolicy(name: "fixed_16MiBx8", chunk: 16 * mib, parallel: 8),
        ]
        var times = [
            UploadSimulator.idealTime(trace: trace, totalBytes: totalBytes),
            UploadSimulator.completionTime(
                trace: trace, policy: &fusion, totalBytes: totalBytes, link: link, seed: seed),
        ]
        for i in fixed.indices {
            times.append(
                UploadSimulator.completionTime(
                    trace: trace, policy: &fixed[i], totalBytes: totalBytes, link: link, seed: seed))
        }
        return times
    }

    static func run(options: [String]) async throws {
        let directory = BenchOptions.traces(in: options)
        let traces = try TraceLoader.loadAll(directory: directory)
        print("schedule: 1 GiB upload, \(traces.count) traces; seconds summed per group (lower is better)")
        var sums: [String: [Double]] = [:]
        var order: [String] = []
        var families: [String: [ThroughputTrace]] = [:]
        for trace in traces { families[trace.family, default: []].append(trace) }
        for family in families.keys.sorted() {
            let members = (families[family] ?? []).sorted { $0.name < $1.name }
            for (position, trace) in members.enumerated() {
                let times = simulate(trace)
                let set = position % 2 == 1 ? "holdout" : "tune"
                var keys = [group(for: family) + " " + set, group(for: family) + " all"]
                if trace.coefficientOfVariation < 0.25 { keys += ["stable " + set, "stable all"] }
                for key in keys {
                    if sums[key] == nil {
                        order.append(key)
                        sums[key] = Array(repeating: 0, count: times.count)
                    }
                    for i in times.indices { sums[key]?[i] += times[i] }
                }
            }
        }
        for key in order.sorted() {
            guard let times = sums[key] else { continue }
            let bestFixed = times.dropFirst(2).min() ?? .infinity
            let bestName = policyNames[times.dropFirst(2).firstIndex(of: bestFixed) ?? 2]
            var line = Measure.pad(key, 14)
            for (i, name) in policyNames.enumerated() {
                line += "\(name)=\(Measure.formatted(times[i], decimals: 0))s  "
            }
            line += "ratio_vs_best_fixed(\(bestName))=\(Measure.formatted(times[1] / bestFixed, decimals: 3))"
            print(line)
        }
        for key in order.sorted() where key.hasSuffix("holdout") {
            guard let times = sums[key] else { continue }
            let ratio = times[1] / (times.dropFirst(2).min() ?? .infinity)
            let isStable = key.hasPrefix("stable")
            let target = isStable ? "<=1.03" : (key.hasPrefix("3G") || key.hasPrefix("LTE") ? "<=0.85" : "(no target)")
            let met = isStable ? ratio <= 1.03 : (target == "<=0.85" ? ratio <= 0.85 : true)
            print(
                "target \(key): fusion/best_fixed=\(Measure.formatted(ratio, decimals: 3)) \(target) -> "
                    + (target == "(no target)" ? "reported" : (met ? "met" : "MISSED")))
        }
    }
}
