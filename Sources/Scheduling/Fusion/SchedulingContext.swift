/// What the scheduler knows besides throughput: link overhead, backend limits, in-flight bytes, device budget.
public struct SchedulingContext: Sendable, Equatable {
    /// Round-trip time in seconds: each request pays about one before its bytes flow.
    public var roundTripTime: Double
    /// Probability that a request fails and is sent again.
    public var failureProbability: Double
    /// Bytes sent but not yet acknowledged (the Lyapunov queue).
    public var inFlightBytes: Int
    /// Smallest chunk the backend accepts (S3: 5 MiB; native: 256 KiB).
    public var minimumChunkBytes: Int
    /// Largest chunk the backend accepts (the scheduler never goes past 16 MiB either).
    public var maximumChunkBytes: Int
    /// Largest number of parts the backend accepts (S3: 10,000), with `totalBytes` it raises the minimum chunk.
    public var maximumParts: Int?
    /// Size of the whole upload, when known.
    public var totalBytes: Int64?
    /// Available memory (gates ULTRAFAST prefetch); nil when unknown.
    public var availableMemoryBytes: Int64?
    /// Cap on parallel uploads from the resource manager; nil for none.
    public var parallelismCap: Int?
    /// Mean seconds between interruptions of the path (connection resets, refusals, timeouts) seen recently; nil
    /// when none was seen. A request that takes a good share of this is likely cut and sent again, so the
    /// scheduler keeps requests well inside it.
    public var secondsBetweenInterruptions: Double?

    /// Creates a context; the defaults are the native backend's limits.
    public init(
        roundTripTime: Double = 0.05, failureProbability: Double = 0.01, inFlightBytes: Int = 0,
        minimumChunkBytes: Int = UploadConstants.chunkSizeMinBytes,
        maximumChunkBytes: Int = UploadConstants.chunkSizeMaxBytes, maximumParts: Int? = nil,
        totalBytes: Int64? = nil, availableMemoryBytes: Int64? = nil, parallelismCap: Int? = nil,
        secondsBetweenInterruptions: Double? = nil
    ) {
        self.roundTripTime = roundTripTime
        self.failureProbability = failureProbability
        self.inFlightBytes = inFlightBytes
        self.minimumChunkBytes = minimumChunkBytes
        self.maximumChunkBytes = maximumChunkBytes
        self.maximumParts = maximumParts
        self.totalBytes = totalBytes
        self.availableMemoryBytes = availableMemoryBytes
        self.parallelismCap = parallelismCap
        self.secondsBetweenInterruptions = secondsBetweenInterruptions
    }

    /// The aligned chunk-size bounds: at least the backend minimum and `total / maximumParts` rounded up to the
    /// alignment, at most the backend and scheduler maximum rounded down. When the part limit would need chunks
    /// above the maximum, the maximum wins (the caller must refuse such an upload; see `fitsPartLimit`).
    public var chunkBounds: ClosedRange<Int> {
        let alignment = UploadConstants.chunkAlignmentBytes
        var low = max(alignment, minimumChunkBytes)
        if let parts = maximumParts, parts > 0, let total = totalBytes, total > 0 {
            let needed = (total + Int64(parts) - 1) / Int64(parts)
            low = max(low, Int(min(needed, Int64(Int.max / 2))))
        }
        low = (low + alignment - 1) / alignment * alignment
        var high = min(maximumChunkBytes, UploadConstants.chunkSizeMaxBytes) / alignment * alignment
        high = max(high, alignment)
        return min(low, high)...high
    }

    /// This context with the caps of a resource degradation level applied (parallelism and chunk size).
    public func applying(_ level: DegradationLevel) -> SchedulingContext {
        var copy = self
        if let cap = level.parallelismCap { copy.parallelismCap = min(parallelismCap ?? cap, cap) }
        copy.maximumChunkBytes = min(maximumChunkBytes, level.chunkSizeCap)
        return copy
    }

    /// Whether `totalBytes` fits in `maximumParts` chunks of the largest allowed size.
    public var fitsPartLimit: Bool {
        guard let parts = maximumParts, let total = totalBytes else { return true }
        return Int64(chunkBounds.upperBound) * Int64(parts) >= total
    }
}
