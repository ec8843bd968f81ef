/// Trains `LogLagModel` from throughput traces: gradient boosting of depth-limited regression trees with absolute loss
/// (each tree fits the sign of the residuals by least squares over quantile bins; each leaf takes the median residual
/// of its rows, times the learning rate). Deterministic: the same rows give the same model, bit for bit.
///
/// Thresholds and leaves are rounded to `Float` while training, so the stored model routes and sums exactly as the
/// model that was trained.
public enum LogLagModelTrainer {
    /// Training settings.
    public struct Configuration: Sendable, Equatable {
        /// Number of trees.
        public var trees = 120
        /// Shrinkage of every leaf.
        public var learningRate = 0.1
        /// Quantile bins per feature (split candidates).
        public var bins = 64
        /// Fewest rows a split leaves on either side.
        public var minimumLeafRows = 20
        /// The settings that made `LogLagModel.trained`.
        public init() {}
    }

    /// One training example: the features the fused predictor saw and the log ratio it should have forecast.
    public struct Row: Sendable, Equatable {
        /// `LogLagModel.features(logLags:)` at the last non-zero measurement before the target.
        public let features: [Double]
        /// ln(actual, floored at 0.01 Mbit/s) − l₀.
        public let target: Double

        /// Creates a row.
        public init(features: [Double], target: Double) {
            self.features = features
            self.target = target
        }
    }

    /// The rows of one trace, exactly as the fused predictor replays it: one per sample with a non-zero actual that
    /// follows at least one non-zero sample (outages are not targets: every predictor holds through them).
    public static func rows(for trace: ThroughputTrace) -> [Row] {
        var rows: [Row] = []
        var history = LogLagHistory()
        var features: [Double]?
        for sample in trace.samples {
            let actual = sample.megabitsPerSecond
            if let features, actual > 0 {
                rows.append(
                    Row(features: features, target: LogLagHistory.logRate(megabitsPerSecond: actual) - features[0]))
            }
            if history.append(megabitsPerSecond: actual) {
                features = LogLagModel.features(logLags: history.heldLags)
            }
        }
        return rows
    }

    /// Trains a model; throws `.invalidArgument` for no rows, rows of the wrong width, non-finite values or settings
    /// out of range.
    public static func train(rows: [Row], configuration: Configuration = Configuration()) throws(SchedulingError)
        -> LogLagModel
    {
        let width = LogLagModel.featureCount
        guard !rows.isEmpty, configuration.trees >= 0, configuration.bins >= 2, configuration.minimumLeafRows >= 1,
            configuration.learningRate > 0, configuration.learningRate.isFinite
        else {
            throw SchedulingError(.invalidArgument, "training needs rows, bins >= 2, leaf rows >= 1, a rate > 0")
        }
        guard
            rows.allSatisfy({ $0.features.count == width && $0.target.isFinite && $0.features.allSatisfy(\.isFinite) })
        else {
            throw SchedulingError(.invalidArgument, "every row needs \(width) finite features and a finite target")
        }
        let count = rows.count
        let targets = rows.map(\.target)
        // Split candidates per feature, as Float values, and every row's bin (first candidate it is <=).
        var candidates: [[Float]] = []
        var binOf: [[Int]] = []
        for feature in 0..<width {
            let column = rows.map { $0.features[feature] }
            let sorted = column.sorted()
            var edges: [Float] = []
            for q in 1..<configuration.bins {
                let edge = Float(sorted[q * count / configuration.bins])
                if Double(edge) < sorted[count - 1], edges.last.map({ edge > $0 }) ?? true { edges.append(edge) }
            }
            candidates.append(edges)
            binOf.append(column.map { value in firstIndex(in: edges) { value <= Double($0) } })
        }
        let base = median(targets)
        var fitted = [Double](repeating: base, count: count)
        var features: [UInt8] = []
        var thresholds: [Float] = []
        var leaves: [Float] = []
        let nodes = LogLagModel.nodesPerTree
        for _ in 0..<configuration.trees {
            let residuals = (0..<count).map { targets[$0] - fitted[$0] }
            let signs = residuals.map { $0 > 0 ? 1.0 : ($0 < 0 ? -1.0 : 0) }
            var members: [[Int]] = [Array(0..<count)]
            for node in 0..<nodes {
                let rowsHere = members[node]
                var best = (gain: 1e-9, feature: 0, bin: -1)
                if rowsHere.count >= 2 * configuration.minimumLeafRows {
                    let total = rowsHere.reduce(0) { $0 + signs[$1] }
                    let parent = total * total / Double(rowsHere.count)
                    for feature in 0..<width where !candidates[feature].isEmpty {
                        let binCount = candidates[feature].count + 1
                        var sums = [Double](repeating: 0, count: binCount)
                        var counts = [Int](repeating: 0, count: binCount)
                        for row in rowsHere {
                            sums[binOf[feature][row]] += signs[row]
                            counts[binOf[feature][row]] += 1
                        }
                        var leftSum = 0.0
                        var leftCount = 0
                        for bin in 0..<(binCount - 1) {
                            leftSum += sums[bin]
                            leftCount += counts[bin]
                            let rightCount = rowsHere.count - leftCount
                            guard leftCount >= configuration.minimumLeafRows else { continue }
                            guard rightCount >= configuration.minimumLeafRows else { break }
                            let rightSum = total - leftSum
                            let gain =
                                leftSum * leftSum / Double(leftCount) + rightSum * rightSum / Double(rightCount)
                                - parent
                            if gain > best.gain { best = (gain, feature, bin) }
                        }
                    }
                }
                if best.bin >= 0 {
                    features.append(UInt8(best.feature))
                    thresholds.append(candidates[best.feature][best.bin])
                    members.append(rowsHere.filter { binOf[best.feature][$0] <= best.bin })
                    members.append(rowsHere.filter { binOf[best.feature][$0] > best.bin })
                } else {
                    features.append(0)
                    thresholds.append(.infinity)
                    members.append(rowsHere)
                    members.append([])
                }
            }
            for leaf in 0..<LogLagModel.leavesPerTree {
                let rowsHere = members[nodes + leaf]
                let value =
                    rowsHere.isEmpty ? 0 : Float(configuration.learningRate * median(rowsHere.map { residuals[$0] }))
                leaves.append(value)
                for row in rowsHere { fitted[row] += Double(value) }
            }
        }
        return try LogLagModel(base: base, features: features, thresholds: thresholds, leaves: leaves)
    }

    /// Mean |ln(predicted/actual)| of `model` over `rows` (the training loss).
    public static func meanAbsoluteLogError(_ model: LogLagModel, rows: [Row]) -> Double {
        guard !rows.isEmpty else { return 0 }
        let total = rows.reduce(0.0) { sum, row in
            sum + abs(model.predictLog(features: row.features) - (row.features[0] + row.target))
        }
        return total / Double(rows.count)
    }

    /// The Swift source of `LogLagModel.trained` for `model`, with `provenance` lines as its header comment.
    public static func swiftSource(_ model: LogLagModel, provenance: [String]) -> String {
        var lines = provenance.map { "// " + $0 }
        lines += [
            "",
            "extension LogLagModel {",
            "    /// The model the fused predictor runs (\(model.treeCount) trees of depth \(LogLagModel.depth); "
                + "how it was made: the header of this file).",
            "    public static let trained = LogLagModel(",
            "        validatedBase: \(model.base), features: trainedFeatures, thresholds: trainedThresholds,",
            "        leaves: trainedLeaves)",
            "",
        ]
        lines += arrayLiteral("trainedFeatures", type: "UInt8", model.features.map { "\($0)" })
        lines.append("")
        lines += arrayLiteral("trainedThresholds", type: "Float", model.thresholds.map(floatLiteral))
        lines.append("")
        lines += arrayLiteral("trainedLeaves", type: "Float", model.leaves.map(floatLiteral))
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Helpers

    private static func arrayLiteral(_ name: String, type: String, _ values: [String]) -> [String] {
        var lines = ["    static let \(name): [\(type)] = ["]
        var line = ""
        for value in values {
            let item = value + ","
            if !line.isEmpty && 8 + line.count + 1 + item.count > 118 {
                lines.append("        " + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + item
        }
        if !line.isEmpty { lines.append("        " + line) }
        lines.append("    ]")
        return lines
    }

    private static func floatLiteral(_ value: Float) -> String {
        if value == .infinity { return ".infinity" }
        return "\(value)"
    }

    private static func firstIndex(in edges: [Float], where predicate: (Float) -> Bool) -> Int {
        var low = 0
        var high = edges.count
        while low < high {
            let mid = (low + high) / 2
            if predicate(edges[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
