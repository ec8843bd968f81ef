public import AetherScheduling

/// How one upload runs: sizes the caller fixes (else the fusion scheduler decides), retries, and feature switches.
public struct UploadConfiguration: Sendable {
    /// The part size in bytes; nil lets the fusion scheduler pick it from the tier (then the backend's limits apply).
    public var chunkSize: Int?
    /// The part size (the upload's unit) when requests carry runs of parts whose length follows the link; nil: the
    /// uploader chooses. Ignored when `chunkSize` fixes every request's size.
    public var partSize: Int? = nil
    /// The most parts in flight at once; nil lets the scheduler decide (and re-decide) it. A backend that takes
    /// parts only in order (IETF, tus) always gets one at a time.
    public var parallel: Int?
    /// Asks for parity chunks on a lossy link; only backends that take parity (`NativeFeaturesBackend`) get any;
    /// true forces shards for every group, false leaves it to the measured loss (AdaptiveRedundancy).
    public var parity: Bool
    /// How often one part is sent before the upload fails (the first send counts).
    public var maximumAttempts: Int
    /// The first retry's delay in seconds; each later one doubles, up to `maximumBackoff`, with jitter.
    public var initialBackoff: Double
    /// The longest delay between two attempts, in seconds.
    public var maximumBackoff: Double
    /// How long the upload waits in total for an open circuit breaker before it fails, in seconds.
    public var circuitWaitLimit: Double
    /// How long one part keeps retrying while its connection is reset or refused, in seconds. Such a failure
    /// is the path's (a phone changing network, a NAT dropping state, a receiver restarting), not the
    /// destination's answer: it counts toward neither `maximumAttempts` nor the circuit breaker, and its
    /// delay grows only to `connectionBackoffLimit`, so the part goes out soon after the path is back.
    public var connectionWaitLimit: Double = 120
    /// The longest delay between two attempts after a reset or refused connection, in seconds: 1, so the first
    /// stream finds the path back within about half a second of its return (a refused connect costs one packet each
    /// way), and `PathRecovery` wakes the others then.
    public var connectionBackoffLimit: Double = 1
    /// The object's `Content-Type`, where the protocol carries one.
    public var contentType: String?
    /// Metadata as the protocol carries it (tus `Upload-Metadata`, S3 `x-amz-meta-*`).
    public var metadata: [String: String]
    /// The switchable features (all on by default): adaptive chunking, Byzantine sampling, parity, dedup,
    /// compression. A feature runs only where the backend supports it.
    public var flags: FeatureFlags
    /// A cap on the upload's average rate in bytes per second (`--max-rate`); nil sends as fast as the link allows.
    public var maximumBytesPerSecond: Int64? = nil
    /// Where the device's thermal, battery and memory state is read (`DeviceResourceReader`: `sys/class/thermal`,
    /// `sys/class/power_supply`, `proc/meminfo` and the cgroup's memory files under it): "" is the real system, a
    /// directory laid out the same way drives it in tests; nil reads nothing. The degradation level it gives
    /// (`DeviceResourceMonitor`, with hysteresis and a debounce) caps parallelism and the request size at every
    /// decision, switches compression off from `heavy` on, and holds new requests while `paused`.
    public var resourceRoot: String? = ""
    /// The thresholds, hysteresis and debounce of the degradation levels.
    public var resourceThresholds = ResourceStateMachine.Configuration()
    /// The most often the device is read, in seconds.
    public var resourceInterval: Double = 1

    /// A configuration; by default the scheduler decides sizes, a part is tried 8 times with backoff from
    /// 0.2 s to 10 s, and an open breaker is waited for at most 120 s.
    public init(
        chunkSize: Int? = nil, parallel: Int? = nil, parity: Bool = false, maximumAttempts: Int = 8,
        initialBackoff: Double = 0.2, maximumBackoff: Double = 10, circuitWaitLimit: Double = 120,
        contentType: String? = nil, metadata: [String: String] = [:], flags: FeatureFlags = .defaults
    ) {
        self.chunkSize = chunkSize
        self.parallel = parallel
        self.parity = parity
        self.maximumAttempts = maximumAttempts
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.circuitWaitLimit = circuitWaitLimit
        self.contentType = contentType
        self.metadata = metadata
        self.flags = flags
    }

    /// Throws `.invalidArgument` for a value outside its range.
    func validate() throws(UploaderError) {
        if let chunkSize, !(1...(256 << 20)).contains(chunkSize) {
            throw UploaderError(.invalidArgument, "chunk size \(chunkSize) is outside 1...268435456 bytes")
        }
        if let partSize, !(1...(256 << 20)).contains(partSize) {
            throw UploaderError(.invalidArgument, "part size \(partSize) is outside 1...268435456 bytes")
        }
        if let maximumBytesPerSecond, maximumBytesPerSecond < 1 {
            throw UploaderError(.invalidArgument, "the rate cap \(maximumBytesPerSecond) is below 1 byte per second")
        }
        if let parallel, !(1...64).contains(parallel) {
            throw UploaderError(.invalidArgument, "parallelism \(parallel) is outside 1...64")
        }
        guard (1...100).contains(maximumAttempts) else {
            throw UploaderError(.invalidArgument, "maximum attempts \(maximumAttempts) is outside 1...100")
        }
        guard initialBackoff >= 0, maximumBackoff >= initialBackoff, circuitWaitLimit >= 0,
            initialBackoff.isFinite, maximumBackoff.isFinite, circuitWaitLimit.isFinite,
            connectionWaitLimit >= 0, connectionWaitLimit.isFinite, connectionBackoffLimit >= 0,
            connectionBackoffLimit.isFinite, resourceInterval >= 0, resourceInterval.isFinite
        else { throw UploaderError(.invalidArgument, "backoff and wait limits must be finite and ordered") }
    }
}
