import Testing

@testable import AetherScheduling

@Suite struct FusionSchedulerTests {
    static let mib = 1024 * 1024

    static func scheduler(steadyAt mbps: Double, samples: Int = 30, jitter: Double = 0.2) -> FusionSchedulerStateMachine
    {
        var machine = FusionSchedulerStateMachine()
        for t in 0..<samples {
            let wobble = jitter == 0 ? 1 : (t % 2 == 0 ? 1 + jitter : 1 - jitter)
            machine.record(
                BandwidthMeasurement(bitsPerSecond: mbps * 1e6 * wobble, duration: 1, timestamp: Double(t + 1)))
        }
        return machine
    }

    static let contexts: [SchedulingContext] = [
        SchedulingContext(),
        SchedulingContext(roundTripTime: 0.2, failureProbability: 0.05),
        SchedulingContext(minimumChunkBytes: 5 * mib, maximumChunkBytes: 5 << 30, maximumParts: 10_000),
        SchedulingContext(
            minimumChunkBytes: 5 * mib, maximumChunkBytes: 5 << 30, maximumParts: 10_000, totalBytes: 100 << 30),
        SchedulingContext(minimumChunkBytes: 100_000, maximumChunkBytes: 3_000_000),
        SchedulingContext(inFlightBytes: 200 * mib),
    ]

    @Test(arguments: [0.5, 2, 10, 50, 150, 900])
    func chunkSizesAreAlignedAndInsideTheBackendBounds(mbps: Double) {
        let machine = Self.scheduler(steadyAt: mbps)
        for context in Self.contexts {
            let decision = machine.decide(context)
            let bounds = context.chunkBounds
            #expect(decision.chunkSizeBytes % UploadConstants.chunkAlignmentBytes == 0)
            #expect(bounds.contains(decision.chunkSizeBytes))
            #expect(decision.chunkSizeBytes >= context.minimumChunkBytes)
            #expect(decision.chunkSizeBytes <= UploadConstants.chunkSizeMaxBytes)
            #expect(decision.parallelism >= 1 && decision.parallelism <= decision.strategy.parallelChunks)
        }
    }

    @Test func boundsHonourTheS3PartLimit() {
        let context = SchedulingContext(
            minimumChunkBytes: 5 * Self.mib, maximumChunkBytes: 5 << 30, maximumParts: 10_000, totalBytes: 100 << 30)
        // 100 GiB / 10,000 parts = 10,737,419 bytes, rounded up to 16 KiB.
        #expect(context.chunkBounds.lowerBound == 10_747_904)
        #expect(context.chunkBounds.upperBound == 16 * Self.mib)
        #expect(context.fitsPartLimit)
        let tooBig = SchedulingContext(
            minimumChunkBytes: 5 * Self.mib, maximumChunkBytes: 5 << 30, maximumParts: 10_000, totalBytes: 200 << 30)
        #expect(!tooBig.fitsPartLimit)
        #expect(tooBig.chunkBounds.lowerBound == 16 * Self.mib)
    }

    @Test(arguments: [
        SchedulingContext(),
        SchedulingContext(roundTripTime: 0.2, failureProbability: 0.05),
        SchedulingContext(minimumChunkBytes: 5 * 1024 * 1024, maximumChunkBytes: 5 << 30, maximumParts: 10_000),
    ])
    func chunkSizeNeverFallsWhenPredictedBandwidthRises(context: SchedulingContext) {
        var previous = 0
        var mbps = 0.2
        while mbps < 1500 {
            defer { mbps *= 1.15 }
            let size = Self.scheduler(steadyAt: mbps).decide(context).chunkSizeBytes
            #expect(size >= previous, "at \(mbps) Mbit/s the chunk shrank to \(size) from \(previous)")
            previous = size
        }
        #expect(previous > 4 * Self.mib)
    }

    @Test func withoutMeasurementsItStartsSmallAndSingle() {
        let decision = FusionSchedulerStateMachine().decide(SchedulingContext())
        #expect(decision.chunkSizeBytes == UploadConstants.chunkSizeMinBytes)
        #expect(decision.parallelism == 1)
    }

    @Test func stableTransportBiasesToTheLargestCandidateWithFullParallelism() {
        let stable = Self.scheduler(steadyAt: 40, samples: 40, jitter: 0)
        #expect(stable.transportStable)
        let decision = stable.decide(SchedulingContext())
        #expect(decision.transportStable)
        #expect(decision.chunkSizeBytes == decision.candidates.max())
        #expect(decision.parallelism == decision.strategy.parallelChunks)
    }

    @Test func variableTransportKeepsFullFusion() {
        let variable = Self.scheduler(steadyAt: 40, samples: 40, jitter: 0.3)
        #expect(!variable.transportStable)
        let decision = variable.decide(SchedulingContext())
        #expect(!decision.transportStable)
    }

    @Test func stabilityNeedsTenSamples() {
        // Nine perfectly stable samples after a noisy start are not enough.
        var machine = Self.scheduler(steadyAt: 40, samples: 30, jitter: 0.3)
        #expect(!machine.transportStable)
        for t in 0..<60 {
            machine.record(BandwidthMeasurement(bitsPerSecond: 40e6, duration: 1, timestamp: Double(100 + t)))
            let count = machine.bandwidth.kalman.consecutiveLowVarianceSamples
            #expect(machine.transportStable == (count >= UploadConstants.transportStabilitySampleCount))
        }
        #expect(machine.transportStable)
    }

    @Test(arguments: [2.0, 5, 20, 80])
    func anInterruptedPathKeepsEachRequestWellInsideTheInterval(mbps: Double) {
        let machine = Self.scheduler(steadyAt: mbps)
        let calm = machine.decide(SchedulingContext())
        let interrupted = machine.decide(SchedulingContext(secondsBetweenInterruptions: 20))
        let bounds = SchedulingContext().chunkBounds
        let perStream = interrupted.predictedBitsPerSecond / 8 / Double(interrupted.parallelism)
        let share = FusionSchedulerStateMachine.Configuration().interruptionShare
        // A request takes at most a quarter of the interval on its stream, unless the smallest chunk already does.
        #expect(
            Double(interrupted.chunkSizeBytes) <= perStream * share * 20
                || interrupted.chunkSizeBytes == bounds.lowerBound)
        #expect(interrupted.chunkSizeBytes <= calm.chunkSizeBytes)
    }

    @Test func resetsEveryTwentySecondsShrinkTheRequestsOfATwentyMegabitLink() {
        // The mobile line's link: 20 Mbit/s, every connection reset every 20 s. Without the interval the scheduler
        // aims at 16 s per request per stream; with it, at 5 s.
        let machine = Self.scheduler(steadyAt: 20)
        let calm = machine.decide(SchedulingContext())
        let interrupted = machine.decide(SchedulingContext(secondsBetweenInterruptions: 20))
        #expect(interrupted.chunkSizeBytes * 2 <= calm.chunkSizeBytes)
        // The MPC alone also prefers smaller requests when a long one is likely cut.
        let plan = { (size: Int, interval: Double?) in
            machine.mpcScore(
                size: size, parallel: 2, trajectory: [2.5e6, 2.5e6], pessimistic: 2e6,
                context: SchedulingContext(secondsBetweenInterruptions: interval))
        }
        #expect(plan(16 * Self.mib, nil) > plan(2 * Self.mib, nil))
        #expect(plan(16 * Self.mib, 20) < plan(2 * Self.mib, 20))
    }

    @Test func aDecisionRisesAgainWhenTheLinkRecoversBetweenResets() {
        // The LTE live test's link in order (Traces/lte_belgium_ghent, from its 18th second): ~30 Mbit/s, a dip to
        // 1-3 Mbit/s, then ~45 Mbit/s; connections reset every 20 s. One scheduler takes the measurements as they
        // come: the decision falls in the dip and rises again once the link recovers.
        var machine = FusionSchedulerStateMachine()
        let context = SchedulingContext(secondsBetweenInterruptions: 20)
        var t = 0.0
        func feed(_ mbps: [Double]) -> Int {
            for rate in mbps {
                t += 1
                machine.record(BandwidthMeasurement(bitsPerSecond: rate * 1e6, duration: 1, timestamp: t))
            }
            return machine.decide(context).chunkSizeBytes
        }
        let before = feed(Array(repeating: 30, count: 8))
        let dip = feed([3, 1.5, 1, 2.5, 1, 3, 2, 1.5, 2, 1])
        let recovered = feed([20, 35, 45, 44, 46, 43, 45, 47, 44, 45])
        #expect(dip < before, "the dip: \(dip), before it: \(before)")
        #expect(recovered > dip, "after the recovery: \(recovered), in the dip: \(dip)")
    }

    @Test func aNearbyServerKeepsTheTiersStreams() {
        // A variable transport at 1 Gbit/s: 50 ms away the model's fewest streams stand; 0.1 ms away (loopback) or 8
        // ms (a busy server's handshake on loopback) every stream count scores about alike, and the tier's are kept.
        let machine = Self.scheduler(steadyAt: 1000, jitter: 0.3)
        #expect(!machine.transportStable)
        let far = machine.decide(SchedulingContext(roundTripTime: 0.05))
        let near = machine.decide(SchedulingContext(roundTripTime: 0.0001))
        #expect(near.parallelism == near.strategy.parallelChunks)
        let busy = machine.decide(SchedulingContext(roundTripTime: 0.008))
        #expect(busy.parallelism == busy.strategy.parallelChunks)
        #expect(far.parallelism <= near.parallelism)
    }

    @Test func aNearbyButSlowServerGetsTheModelsStreams() {
        // 15 Mbit/s with no round trip to speak of: a 5 MiB part takes seconds, the server's time per request is
        // noise, and the tier's six streams would put 30 MiB at risk of the next reset.
        let machine = Self.scheduler(steadyAt: 15, jitter: 0.3)
        let near = machine.decide(SchedulingContext(roundTripTime: 0.0002, minimumChunkBytes: 5 << 20))
        #expect(near.strategy.parallelChunks == 6)
        #expect(near.parallelism < near.strategy.parallelChunks)
    }

    @Test func aRarelyInterruptedPathIsScheduledAsACalmOne() {
        for mbps in [5.0, 40, 300] {
            let machine = Self.scheduler(steadyAt: mbps)
            let calm = machine.decide(SchedulingContext())
            #expect(
                machine.decide(SchedulingContext(secondsBetweenInterruptions: 1e6)).chunkSizeBytes
                    == calm.chunkSizeBytes)
        }
    }

    @Test func aStableTransportIsCappedOnAnInterruptedPathToo() {
        let stable = Self.scheduler(steadyAt: 40, samples: 40, jitter: 0)
        #expect(stable.transportStable)
        let calm = stable.decide(SchedulingContext())
        let interrupted = stable.decide(SchedulingContext(secondsBetweenInterruptions: 8))
        let perStream = interrupted.predictedBitsPerSecond / 8 / Double(interrupted.parallelism)
        #expect(Double(interrupted.chunkSizeBytes) <= perStream * 2)
        #expect(interrupted.chunkSizeBytes < calm.chunkSizeBytes)
    }

    @Test func aGrowingInFlightQueueShrinksTheChunk() {
        let machine = Self.scheduler(steadyAt: 20, jitter: 0.2)
        let idle = machine.decide(SchedulingContext(inFlightBytes: 0))
        let backlog = machine.decide(SchedulingContext(inFlightBytes: 400 * Self.mib))
        #expect(!idle.queueLimited)
        #expect(backlog.queueLimited)
        #expect(backlog.chunkSizeBytes < idle.chunkSizeBytes)
    }

    @Test func ultrafastUsesEightStreamsAndOtherTiersSix() {
        let fast = Self.scheduler(steadyAt: 400, jitter: 0.2).decide(SchedulingContext(availableMemoryBytes: 1 << 30))
        #expect(fast.strategy.tier == .ultrafast)
        #expect(fast.strategy.parallelChunks == 8)
        let normal = Self.scheduler(steadyAt: 10, jitter: 0.2).decide(SchedulingContext())
        #expect(normal.strategy.parallelChunks == 6)
        #expect(normal.parallelism <= 6)
    }

    @Test func resourceCapLimitsParallelism() {
        let machine = Self.scheduler(steadyAt: 400, samples: 40, jitter: 0)
        let decision = machine.decide(SchedulingContext(parallelismCap: 2))
        #expect(decision.parallelism <= 2)
    }

    @Test func degradationLevelsCapTheDecision() {
        let machine = Self.scheduler(steadyAt: 400, samples: 40, jitter: 0)
        let heavy = machine.decide(SchedulingContext().applying(.heavy))
        #expect(heavy.parallelism <= 2)
        #expect(heavy.chunkSizeBytes <= 4 * Self.mib)
        let normal = machine.decide(SchedulingContext().applying(.normal))
        #expect(normal.parallelism == 8)
        #expect(normal.chunkSizeBytes == 16 * Self.mib)
        #expect(machine.decide(SchedulingContext().applying(.paused)).parallelism == 0)
    }

    @Test func pathChangeThroughTheSchedulerResetsStability() {
        let scheduler = FusionScheduler()
        for t in 0..<40 {
            scheduler.record(BandwidthMeasurement(bitsPerSecond: 40e6, duration: 1, timestamp: Double(t)))
        }
        #expect(scheduler.transportStable)
        scheduler.pathDidChange()
        #expect(!scheduler.transportStable)
    }

    @Test func alignRoundsDownAndClamps() {
        let bounds = 262_144...1_048_576
        #expect(FusionSchedulerStateMachine.align(300_000, bounds) == 294_912)
        #expect(FusionSchedulerStateMachine.align(1, bounds) == 262_144)
        #expect(FusionSchedulerStateMachine.align(9_999_999, bounds) == 1_048_576)
        #expect(FusionSchedulerStateMachine.align(-5, bounds) == 262_144)
    }
}
