/// One throughput trace: a sequence of windows with the rate measured in each.
public struct ThroughputTrace: Sendable, Equatable {
    /// One window of a trace.
    public struct Sample: Sendable, Equatable {
        /// Start of the window, seconds from the trace's start.
        public let start: Double
        /// Length of the window in seconds (> 0).
        public let duration: Double
        /// Throughput in the window, Mbit/s (0 = outage).
        public let megabitsPerSecond: Double

        /// Creates a sample.
        public init(start: Double, duration: Double, megabitsPerSecond: Double) {
            self.start = start
            self.duration = duration
            self.megabitsPerSecond = megabitsPerSecond
        }

        /// The sample as a measurement ending at its window's end.
        public var measurement: BandwidthMeasurement {
            BandwidthMeasurement(
                bitsPerSecond: megabitsPerSecond * 1e6, duration: duration, timestamp: start + duration)
        }
    }

    /// Family (the trace folder's name, e.g. `hsdpa_norway_3g`).
    public let family: String
    /// Name within the family (file name, or the run key for multi-run files).
    public let name: String
    /// The windows, in time order.
    public let samples: [Sample]

    /// Creates a trace.
    public init(family: String, name: String, samples: [Sample]) {
        self.family = family
        self.name = name
        self.samples = samples
    }

    /// Total duration in seconds.
    public var duration: Double { samples.reduce(0) { $0 + $1.duration } }

    /// Mean throughput over time, Mbit/s.
    public var meanMegabitsPerSecond: Double {
        let total = duration
        return total > 0 ? samples.reduce(0) { $0 + $1.megabitsPerSecond * $1.duration } / total : 0
    }

    /// Coefficient of variation of the per-window throughput.
    public var coefficientOfVariation: Double {
        guard samples.count > 1 else { return 0 }
        let values = samples.map(\.megabitsPerSecond)
        let mean = values.reduce(0, +) / Double(values.count)
        guard mean > 0 else { return 0 }
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1)
        return variance.squareRoot() / mean
    }
}
