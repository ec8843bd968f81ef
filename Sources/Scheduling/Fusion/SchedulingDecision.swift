/// The scheduler's answer for the next chunk(s).
public struct SchedulingDecision: Sendable, Equatable {
    /// Chunk size in bytes: a multiple of 16 KiB inside the backend's bounds.
    public let chunkSizeBytes: Int
    /// Parallel uploads to keep in flight (0 when the resource manager paused uploads).
    public let parallelism: Int
    /// Speed tier of the predicted throughput, with its strategy.
    public let strategy: TierStrategy
    /// Whether anti-fighting mode chose the largest candidate (the transport's congestion control is stable).
    public let transportStable: Bool
    /// Whether the Lyapunov check shrank the fused size because the in-flight queue is growing.
    public let queueLimited: Bool
    /// The four controllers' proposals (MPC, ABR, EWMA, Kalman) before fusion, in bytes.
    public let candidates: [Int]
    /// The throughput the decision assumed, bit/s.
    public let predictedBitsPerSecond: Double
    /// The rate the decision plans against when bytes are at risk: the forecast less one standard deviation of the
    /// Kalman filter, at least a quarter of the forecast (bit/s; 0 with no forecast).
    public let pessimisticBitsPerSecond: Double
}
