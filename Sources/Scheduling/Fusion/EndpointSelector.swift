#if canImport(Glibc)
    import Glibc
#endif

/// Thompson sampling among endpoints (CDN edges, regions) by observed throughput.
///
/// Each endpoint keeps the mean and variance of its log-throughput; a choice draws one plausible mean per endpoint
/// from N(mean, (variance + prior)/(n + 1)) and takes the highest, so a rarely tried endpoint keeps a wide draw and
/// is explored, and a consistently fast one wins most draws.
public struct EndpointSelector: Sendable {
    private struct Stats: Sendable {
        var count = 0
        var mean = 0.0
        var sumSquares = 0.0
    }

    /// Endpoint names, in the order given.
    public let endpoints: [String]
    private var stats: [Stats]
    /// Prior variance of a log-throughput mean (wide: an untried endpoint may be anything).
    public let priorVariance: Double
    /// Prior mean log-throughput (bit/s) for untried endpoints.
    public let priorMean: Double

    /// Creates a selector over `endpoints` (at least one; duplicates are kept as given).
    public init(endpoints: [String], priorMegabitsPerSecond: Double = 10, priorVariance: Double = 4) {
        precondition(!endpoints.isEmpty, "EndpointSelector needs at least one endpoint")
        self.endpoints = endpoints
        stats = Array(repeating: Stats(), count: endpoints.count)
        self.priorVariance = priorVariance
        priorMean = log(max(1e-3, priorMegabitsPerSecond) * 1e6)
    }

    /// Records a throughput observed on endpoint `index` (out-of-range indices are ignored).
    public mutating func record(endpoint index: Int, bitsPerSecond: Double) {
        guard stats.indices.contains(index), bitsPerSecond.isFinite else { return }
        let x = log(max(bitsPerSecond, 1))
        var s = stats[index]
        s.count += 1
        let delta = x - s.mean
        s.mean += delta / Double(s.count)
        s.sumSquares += delta * (x - s.mean)
        stats[index] = s
    }

    /// Observations recorded for endpoint `index`.
    public func observations(endpoint index: Int) -> Int { stats.indices.contains(index) ? stats[index].count : 0 }

    /// The endpoint to use next, drawn with `generator`.
    public func choose<G: RandomNumberGenerator>(using generator: inout G) -> Int {
        var best = (index: 0, draw: -Double.infinity)
        for (index, s) in stats.enumerated() {
            let mean: Double
            let variance: Double
            if s.count == 0 {
                mean = priorMean
                variance = priorVariance
            } else {
                let sample = s.count > 1 ? s.sumSquares / Double(s.count - 1) : priorVariance
                mean = s.mean
                variance = (sample + 0.01) / Double(s.count + 1)
            }
            let draw = mean + variance.squareRoot() * Self.standardNormal(using: &generator)
            if draw > best.draw { best = (index, draw) }
        }
        return best.index
    }

    /// A standard normal draw (Box–Muller).
    static func standardNormal<G: RandomNumberGenerator>(using generator: inout G) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &generator)
        let u2 = Double.random(in: 0..<1, using: &generator)
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}
