#if canImport(Glibc)
    import Glibc
#endif

/// The fusion scheduler as a plain value: four controllers propose a chunk size, a weighted trimmed (winsorized) mean
/// fuses them, a Lyapunov drift-plus-penalty check guards the in-flight queue, and anti-fighting mode defers to a stable
/// transport by taking the largest proposal.
///
/// Controllers (all see the same fused bandwidth forecast and context):
/// - MPC: receding horizon over (chunk size × parallelism): a plan's score is its mean goodput over the next
///   `horizon` forecast steps, `c·S·P / (o·c + S·P) · (1 − p)` with request overhead o (one RTT) and failure
///   probability p, less a penalty for bytes in flight beyond `maxQueueSeconds` of the pessimistic (−1σ) rate,
///   a retry cost and a small per-stream cost; the first step of the best plan is applied.
/// - ABR (throughput ladder): the largest rung of 256 KiB·2ᵏ whose transfer at 80 % of the forecast, sharing the
///   link with the MPC's parallelism, takes at most `targetChunkSeconds`.
/// - EWMA: the EWMA rate × `targetChunkSeconds` / parallelism.
/// - Kalman: the Kalman rate minus one standard deviation × `targetChunkSeconds` / parallelism.
///
/// When the path is interrupted (resets, refusals, timeouts every T seconds on average,
/// `SchedulingContext.secondsBetweenInterruptions`), a request of d seconds is cut with probability 1 − e^(−d/T)
/// (interruptions as a Poisson process) and all its bytes go again: the MPC scores plans with that probability, the
/// rate-based controllers aim at `min(targetChunkSeconds, interruptionShare × T)`, and no request is planned to
/// take longer than that on its stream.
public struct FusionSchedulerStateMachine: Sendable {
    /// Tunables.
    public struct Configuration: Sendable, Equatable {
        /// Seconds one chunk should take on one stream (ABR/EWMA/Kalman target).
        public var targetChunkSeconds: Double = 16
        /// On an interrupted path, the most a request may take on its stream, as a share of the mean time between
        /// interruptions (a quarter: about one request in five is cut, losing on average an eighth of the interval).
        public var interruptionShare: Double = 0.25
        /// Forecast steps the MPC looks ahead.
        public var horizon: Int = 5
        /// In-flight bytes beyond this many seconds of the pessimistic rate are penalised.
        public var maxQueueSeconds: Double = 20
        /// Controller weights (MPC, ABR, EWMA, Kalman).
        public var weights: [Double] = [0.35, 0.25, 0.15, 0.25]
        /// Candidates clamped at each end of the fusion (the winsorized trimmed mean keeps the result monotone).
        public var trimCount: Int = 1
        /// Lyapunov trade-off V between queue stability and chunk-size utility.
        public var lyapunovV: Double = 2
        /// The parallelism is the fewest streams whose plan scores at least this fraction of the full plan's.
        public var parallelismEfficiency: Double = 0.999
        /// A round trip under this many seconds (loopback, a LAN, a nearby region) keeps the tier's streams: the
        /// model's cost of a request is its round trip, and the server's own time per request, which it does not see,
        /// dominates there.
        public var nearRoundTripSeconds: Double = 0.02
        /// Creates the defaults.
        public init() {}
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// The fused bandwidth view (Kalman, EWMA, last, harmonic mean).
    public private(set) var bandwidth: FusedBandwidthEstimator

    /// Creates a scheduler with no measurements.
    public init(configuration: Configuration = Configuration(), bandwidth: FusedBandwidthEstimator = .init()) {
        self.configuration = configuration
        self.bandwidth = bandwidth
    }

    /// Folds in a throughput measurement.
    public mutating func record(_ measurement: BandwidthMeasurement) { bandwidth.update(measurement) }

    /// A network path change: the Kalman filter's process noise goes up.
    public mutating func notePathChange() { bandwidth.notePathChange() }

    /// The transport is stable when the Kalman variance coefficient is below the threshold for enough samples.
    public var transportStable: Bool {
        bandwidth.kalman.varianceEstimate < UploadConstants.transportStabilityThreshold
            && bandwidth.kalman.consecutiveLowVarianceSamples >= UploadConstants.transportStabilitySampleCount
    }

    /// The decision for the next chunk.
    public func decide(_ context: SchedulingContext) -> SchedulingDecision {
        let bounds = context.chunkBounds
        let fused = bandwidth.predict()
        let kalman = bandwidth.kalman.predict()
        let members = bandwidth.memberPredictions
        let ewmaRate = members.count > 1 ? members[1].bitsPerSecond : fused.bitsPerSecond
        let rate = fused.bitsPerSecond / 8
        let tier = NetworkSpeedTier(megabitsPerSecond: fused.bitsPerSecond / 1e6)
        let strategy = tier.strategy(availableMemoryBytes: context.availableMemoryBytes)
        let maxParallel = max(1, min(strategy.parallelChunks, context.parallelismCap ?? Int.max))
        guard rate > 0 else {
            // No forecast yet (or an outage): smallest chunk, one stream, until a measurement arrives.
            return SchedulingDecision(
                chunkSizeBytes: bounds.lowerBound, parallelism: 1, strategy: strategy, transportStable: false,
                queueLimited: false, candidates: [], predictedBitsPerSecond: 0,
                pessimisticBitsPerSecond: 0)
        }
        let sigma = kalman.standardDeviation / 8
        let pessimistic = max(rate * 0.25, rate - sigma)
        let ladder = Self.ladder(bounds)

        // MPC.
        let trajectory = (1...max(1, configuration.horizon)).map { step -> Double in
            let ahead = bandwidth.kalman.predict(horizon: Double(step)).bitsPerSecond / 8
            return max(pessimistic * 0.5, min(rate * 2, ahead > 0 ? (ahead + rate) / 2 : rate))
        }
        // The chunk size is planned with every stream the tier allows (goodput depends on the bytes in flight,
        // S·P, so planning S at full P keeps the proposal growing with the forecast); the parallelism is then the
        // fewest streams that reach 99.9 % of that plan's score (fewer streams contend less).
        var best = (score: -Double.infinity, size: bounds.lowerBound, parallel: maxParallel)
        for size in ladder {
            let score = mpcScore(
                size: size, parallel: maxParallel, trajectory: trajectory, pessimistic: pessimistic, context: context)
            if score > best.score { best = (score, size, maxParallel) }
        }
        for parallel in 1..<maxParallel {
            let score = mpcScore(
                size: best.size, parallel: parallel, trajectory: trajectory, pessimistic: pessimistic, context: context)
            if score >= configuration.parallelismEfficiency * best.score {
                best.parallel = parallel
                break
            }
        }
        // Below `nearRoundTripSeconds` the model sees almost no cost per request, so every stream count scores about
        // the same and the fewest wins; but what limits one stream there is the server's own time per request, which
        // the model does not see (RGW on loopback answers a 16 MiB part in ~0.3 s; one part in flight took 2.4x as
        // long as eight). There, as on a stable transport, the tier's streams are kept. The round trip is the TCP
        // handshake's, which a busy server on loopback stretches to 3-11 ms: hence 20 ms, not a loopback figure.
        // Only on a fast link: where a request's transfer takes seconds the server's time per request is noise, and
        // the tier's streams would only put more bytes at risk of the next reset.
        let nearby = context.roundTripTime < configuration.nearRoundTripSeconds && tier >= .fast
        let parallel = transportStable || nearby ? maxParallel : best.parallel
        let target = min(
            configuration.targetChunkSeconds,
            context.secondsBetweenInterruptions.map { max(0.5, $0 * configuration.interruptionShare) } ?? .infinity)
        // The rate-based controllers size a chunk for one stream's share of a fixed reference stream count, so
        // their proposals grow with the forecast (dividing by the chosen or tier parallelism would make them jump
        // down when a stream is added or the tier changes).
        let streams = Double(UploadConstants.maxParallelChunkUploads)
        // ABR ladder.
        let share = 0.8 * rate / streams
        let abr = ladder.last { Double($0) / share <= target } ?? bounds.lowerBound
        // EWMA and Kalman.
        let ewma = ewmaRate / 8 * target / streams
        let kalmanSize = max(0, kalman.bitsPerSecond / 8 - sigma) * target / streams
        let candidates = [Double(best.size), Double(abr), ewma, kalmanSize].map {
            Self.align(Int(min($0, 1e15)), bounds)
        }

        var chosen: Int
        if transportStable {
            chosen = candidates.max() ?? bounds.lowerBound
        } else {
            let pairs = zip(candidates, configuration.weights).map { (value: Double($0), weight: $1) }
            chosen = Self.align(
                Int(WeightedTrimmedMean.winsorized(pairs, trimCount: configuration.trimCount) ?? 0), bounds)
        }
        // On an interrupted path no request may take more than `target` on its stream, stable transport or not.
        if context.secondsBetweenInterruptions != nil {
            chosen = min(chosen, Self.align(Int(min(rate / Double(max(1, parallel)) * target, 1e15)), bounds))
        }

        // Lyapunov drift-plus-penalty on the in-flight queue: pick among the fused size and its halvings the one
        // minimising Q·(a − μ) − V·μ²·log2(1 + a/min) (μ: bytes the link drains per second, a: bytes added).
        var queueLimited = false
        let queue = Double(max(0, context.inFlightBytes))
        if queue > 0 {
            var options: [Int] = [chosen]
            var smaller = chosen / 2
            while smaller >= bounds.lowerBound {
                options.append(Self.align(smaller, bounds))
                smaller /= 2
            }
            let mu = rate
            func objective(_ a: Int) -> Double {
                queue / mu * (Double(a) / mu - 1) - configuration.lyapunovV
                    * log2(1 + Double(a) / Double(bounds.lowerBound))
            }
            let pick = options.min { objective($0) < objective($1) } ?? chosen
            if pick < chosen {
                chosen = pick
                queueLimited = true
            }
        }
        // A cap of 0 (resource level `paused`) means send nothing until the device recovers.
        let allowed = context.parallelismCap == 0 ? 0 : parallel
        return SchedulingDecision(
            chunkSizeBytes: chosen, parallelism: allowed, strategy: strategy, transportStable: transportStable,
            queueLimited: queueLimited, candidates: candidates, predictedBitsPerSecond: fused.bitsPerSecond,
            pessimisticBitsPerSecond: pessimistic * 8)
    }

    /// MPC objective of one (size, parallelism) plan over the forecast trajectory (bytes delivered, penalised).
    func mpcScore(size: Int, parallel: Int, trajectory: [Double], pessimistic: Double, context: SchedulingContext)
        -> Double
    {
        let s = Double(size)
        let p = Double(parallel)
        let overhead = max(0.001, context.roundTripTime)
        let success = 1 - min(0.99, max(0, context.failureProbability))
        var total = 0.0
        for c in trajectory {
            // A request on one of p streams takes about one round trip plus s / (c / p) seconds; on an interrupted
            // path it survives with probability e^(−d/T).
            let survives = context.secondsBetweenInterruptions.map {
                exp(-(overhead + s * p / max(c, 1)) / max($0, 0.001))
            }
            let goodput = c * s * p / (overhead * c + s * p) * success * (survives ?? 1)
            total += goodput
        }
        // Bytes in flight beyond the queue budget are at risk when the rate drops; so is a retried chunk.
        let inFlight = s * p
        let budget = pessimistic * configuration.maxQueueSeconds
        let excess = max(0, inFlight - budget) / max(budget, 1)
        let retryCost = (1 - success) * s / max(pessimistic, 1)
        let streamCost = 0.002 * p
        let mean = total / Double(trajectory.count)
        return mean * (1 - 0.5 * excess - streamCost) - retryCost * mean / Double(trajectory.count * 10)
    }

    /// Chunk sizes to consider: 256 KiB·2ᵏ inside the bounds, plus both bounds.
    static func ladder(_ bounds: ClosedRange<Int>) -> [Int] {
        var sizes = Set([bounds.lowerBound, bounds.upperBound])
        var size = 256 * 1024
        while size <= bounds.upperBound {
            if size >= bounds.lowerBound { sizes.insert(size) }
            size *= 2
        }
        return sizes.sorted()
    }

    /// `size` rounded down to 16 KiB and clamped into `bounds`.
    public static func align(_ size: Int, _ bounds: ClosedRange<Int>) -> Int {
        let alignment = UploadConstants.chunkAlignmentBytes
        let aligned = max(0, size) / alignment * alignment
        return min(bounds.upperBound, max(bounds.lowerBound, aligned))
    }
}
