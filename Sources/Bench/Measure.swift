#if canImport(Glibc)
    import Glibc
#endif

/// Timing helpers: warm up, run several times, take the median.
enum Measure {
    /// A size for a line's name: `1GiB`, `64MiB`.
    static func sizeLabel(mebibytes: Int) -> String {
        mebibytes % 1024 == 0 ? "\(mebibytes / 1024)GiB" : "\(mebibytes)MiB"
    }

    /// Monotonic seconds.
    static func now() -> Double {
        var spec = timespec()
        unsafe clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Median seconds of `runs` timed calls of `body`, after `warmup` untimed ones.
    static func median(runs: Int = 7, warmup: Int = 2, _ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<warmup { try body() }
        var times: [Double] = []
        for _ in 0..<runs {
            let start = now()
            try body()
            times.append(now() - start)
        }
        times.sort()
        return times[times.count / 2]
    }

    /// Bytes per second as `1.23 GB/s`.
    static func rate(bytes: Int, seconds: Double) -> String {
        formatted(Double(bytes) / seconds / 1e9, decimals: 2) + " GB/s"
    }

    /// A fixed-point decimal without Foundation.
    static func formatted(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard decimals > 0 else { return sign + "\(whole)" }
        let digits = String(fraction)
        return sign + "\(whole)." + String(repeating: "0", count: decimals - digits.count) + digits
    }

    /// One result line: `name  value  ratio_vs_baseline=0.96`.
    static func line(_ name: String, _ value: String, ratios: [(String, Double)]) {
        let ratioText = ratios.map { "\($0.0)=\(formatted($0.1, decimals: 2))" }.joined(separator: "  ")
        print(pad(name, 28) + pad(value, 14) + ratioText)
    }

    /// `text` padded with spaces to `width` (never cut).
    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}

/// A benchmark that could not run (set-up failed, or a result failed its own check).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
