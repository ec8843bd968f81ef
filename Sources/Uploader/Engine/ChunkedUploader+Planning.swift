import AetherScheduling
import AetherTransport
import Synchronization

/// What the link planner needs of the upload under way: its part size and size, the most parts one request may
/// carry and the most streams the backend allows.
struct PlanningInputs: Sendable {
    let partSize: Int64
    let size: Int64
    let runMaximum: Int
    let parallelLimit: Int
}

/// The planning state an upload's requests share across isolation: the inputs of the upload under way and the gate
/// its attempts pass (the stream count the planner decided, applied to every attempt).
final class LinkPlanning: Sendable {
    let gate = StreamGate(limit: 1)
    private let inputs = Mutex<PlanningInputs?>(nil)

    var current: PlanningInputs? { inputs.withLock { $0 } }

    func begin(_ value: PlanningInputs) { inputs.withLock { $0 = value } }
}

extension ChunkedUploader {
    /// The part size before any measurement: the scheduler's when it has a prediction, else the ULTRAFAST tier's
    /// for a loopback destination and the NORMAL tier's for any other.
    static func firstChunkSize(_ decision: SchedulingDecision, loopback: Bool = false) -> Int {
        guard decision.predictedBitsPerSecond > 0 else {
            return NetworkSpeedTier(loopback: loopback).strategy(availableMemoryBytes: nil).chunkSizeBytes
        }
        return decision.chunkSizeBytes
    }

    /// The parallelism before any measurement: the scheduler's, or the ULTRAFAST tier's on loopback.
    static func firstParallelism(_ decision: SchedulingDecision, loopback: Bool) -> Int {
        guard decision.predictedBitsPerSecond <= 0, loopback else { return decision.parallelism }
        return NetworkSpeedTier.ultrafast.strategy(availableMemoryBytes: nil).parallelChunks
    }

    /// The most bytes read ahead: prefetched chunks are buffers beyond the ones in flight, and the upload keeps its
    /// memory within parallel x chunk size + 64 MiB (issue 17), so read-ahead takes at most 4 MiB of that slack.
    static let prefetchByteBudget = 4 << 20

    /// The chunks read ahead: the ULTRAFAST tier's prefetch (when memory allows it) on a loopback destination before
    /// any measurement, else what the scheduler's tier says; never more than `prefetchByteBudget` bytes of chunks.
    static func firstPrefetch(
        _ decision: SchedulingDecision, loopback: Bool, availableMemoryBytes: Int64?, chunkSize: Int
    ) -> Int {
        let wanted =
            decision.predictedBitsPerSecond <= 0 && loopback
            ? NetworkSpeedTier.ultrafast.strategy(availableMemoryBytes: availableMemoryBytes).prefetchChunks
            : decision.strategy.prefetchChunks
        return min(wanted, prefetchByteBudget / max(1, chunkSize))
    }

    func initialDecision(size: Int64, availableMemoryBytes: Int64?) -> SchedulingDecision {
        let capabilities = backend.capabilities
        let context = SchedulingContext(
            minimumChunkBytes: Int(clamping: capabilities.minimumPartSize),
            maximumChunkBytes: Int(clamping: capabilities.maximumPartSize), maximumParts: capabilities.maximumParts,
            totalBytes: size, availableMemoryBytes: availableMemoryBytes, parallelismCap: configuration.parallel)
        return scheduler.decide(context.applying(resourceLevel))
    }

    /// The scheduler's decision for now, bounded by the link planner (`docs/SCHEDULING.md`, "Progress on
    /// interrupted paths"): the streams, the parts per request and whether to hold new requests back. nil before
    /// an upload is under way.
    nonisolated func plannedRequests(inFlightBytes: Int? = nil) -> (plan: LinkPlan, decision: SchedulingDecision)? {
        guard let inputs = linkPlanning.current else { return nil }
        let capabilities = backend.capabilities
        let inFlight = inFlightBytes ?? Int(clamping: linkPlanning.gate.inFlight.bytes)
        let decision = scheduler.decide(
            SchedulingContext(
                roundTripTime: interruptions.roundTripTime ?? SchedulingContext().roundTripTime,
                inFlightBytes: inFlight, minimumChunkBytes: Int(clamping: capabilities.minimumPartSize),
                maximumChunkBytes: Int(clamping: capabilities.maximumPartSize),
                maximumParts: capabilities.maximumParts, totalBytes: inputs.size,
                parallelismCap: configuration.parallel, secondsBetweenInterruptions: interruptions.meanInterval()
            ).applying(refreshedResourceLevel()))
        let plan = LinkPlanner.plan(
            decision,
            keeping: LinkPlanner.Keeping(
                unitBytes: Int(clamping: inputs.partSize), keepsPrefix: capabilities.keepsCutPrefix),
            roundTripTime: interruptions.roundTripTime ?? SchedulingContext().roundTripTime,
            interruptions: interruptions.forecast())
        return (plan, decision)
    }

    /// The parts one request carries under `plan`: the planned bytes in whole parts, 1...the run maximum.
    nonisolated static func parts(of plan: LinkPlan, inputs: PlanningInputs) -> Int {
        RunPlanner.partsPerRequest(
            chunkSizeBytes: plan.requestBytes, partSize: inputs.partSize, maximum: inputs.runMaximum)
    }

    /// The stream count `plan` allows, within the backend's and the configuration's limits and the device's level
    /// (a configured `parallel` is capped by it too).
    nonisolated func streams(of plan: LinkPlan, inputs: PlanningInputs) -> Int {
        cappedByDevice(min(inputs.parallelLimit, max(1, configuration.parallel ?? plan.streams)))
    }

    /// `streams` within the device level's cap (at least one: `paused` holds requests in `admitAttempt` instead).
    nonisolated func cappedByDevice(_ streams: Int) -> Int {
        resourceLevel.parallelismCap.map { min(streams, max(1, $0)) } ?? streams
    }

    /// The device's degradation level now (`normal` when it is not read).
    nonisolated var resourceLevel: DegradationLevel { resources?.level ?? .normal }

    /// The level after reading the device again when the last reading is older than `resourceInterval`.
    nonisolated func refreshedResourceLevel() -> DegradationLevel {
        resources?.refresh(notWithin: configuration.resourceInterval) ?? .normal
    }

    /// Waits while the planner holds new requests back (a protocol that loses a cut request whole, an interruption
    /// due before one could finish), then takes a slot of the stream gate for `bytes`. The wait is re-planned every
    /// quarter second and ends at the latest when the interruption is late.
    /// With adaptive chunking off the stream count stays the configured one and nothing is held back.
    nonisolated func admitAttempt(bytes: Int64) async throws {
        // A paused device (battery or temperature at its last threshold) starts nothing until it recovers.
        while refreshedResourceLevel() == .paused {
            try await RetryPolicy.sleep(seconds: 0.25)
        }
        if configuration.flags.adaptiveChunking {
            while let (plan, _) = plannedRequests(), plan.holdsBack {
                try await RetryPolicy.sleep(seconds: 0.25)
            }
            if let (plan, _) = plannedRequests(), let inputs = linkPlanning.current {
                linkPlanning.gate.setLimit(streams(of: plan, inputs: inputs))
            }
        }
        try await linkPlanning.gate.acquire(bytes: bytes)
    }
}
