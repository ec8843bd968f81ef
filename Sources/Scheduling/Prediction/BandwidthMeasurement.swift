/// One throughput observation: how many bits moved in how long, and when it ended.
public struct BandwidthMeasurement: Sendable, Equatable {
    /// Observed throughput in bits per second, in [0, `maximumBitsPerSecond`].
    public let bitsPerSecond: Double
    /// The highest rate a measurement records, 1e15 bit/s (1 Pbit/s): anything above is a measurement error, and
    /// capping it keeps the squares in the estimators finite.
    public static let maximumBitsPerSecond = 1e15
    /// Length of the observation window in seconds.
    public let duration: Double
    /// Monotonic time (seconds) at the end of the window.
    public let timestamp: Double

    /// A measurement from a throughput; negative or non-finite rates are recorded as 0 (an outage), finite rates above
    /// `maximumBitsPerSecond` as that maximum.
    public init(bitsPerSecond: Double, duration: Double, timestamp: Double) {
        self.bitsPerSecond =
            bitsPerSecond.isFinite && bitsPerSecond > 0 ? min(bitsPerSecond, Self.maximumBitsPerSecond) : 0
        self.duration = duration.isFinite ? max(0, duration) : 0
        self.timestamp = timestamp
    }

    /// A measurement from a transfer of `bytes` in `duration` seconds ending at `timestamp`.
    public init(bytes: Int, duration: Double, timestamp: Double) {
        let rate = duration > 0 ? Double(max(0, bytes)) * 8 / duration : 0
        self.init(bitsPerSecond: rate, duration: duration, timestamp: timestamp)
    }
}
