import AetherIO
import AetherScheduling

/// A trace-driven upload simulator: requests pay a request overhead (one RTT) before their bytes flow, parallel
/// streams share the trace's capacity equally (each capped at a TCP window per RTT), a request fails with a fixed
/// probability at a uniformly random point of its transfer or after `stallTimeout` seconds without progress, and
/// failed chunks are sent again. The trace loops until the upload completes.
struct UploadSimulator {
    /// Link parameters of one simulation.
    struct Link {
        var roundTripTime: Double
        var failureProbability: Double
        var streamWindowBytes: Double = 2 * 1024 * 1024
        var stallTimeout: Double = 10
    }

    /// A policy: decides chunk size and parallelism, and sees one aggregate throughput measurement per second.
    protocol Policy {
        var name: String { get }
        mutating func observe(_ measurement: BandwidthMeasurement)
        func decide(inFlightBytes: Int, totalBytes: Int64, link: Link) -> (chunk: Int, parallel: Int)
    }

    /// A fixed chunk size and parallelism.
    struct FixedPolicy: Policy {
        let name: String
        let chunk: Int
        let parallel: Int
        mutating func observe(_ measurement: BandwidthMeasurement) {}
        func decide(inFlightBytes: Int, totalBytes: Int64, link: Link) -> (chunk: Int, parallel: Int) {
            (chunk, parallel)
        }
    }

    /// The fusion scheduler.
    struct FusionPolicy: Policy {
        var name: String { "fusion" }
        var scheduler = FusionSchedulerStateMachine()
        var minimumChunk = UploadConstants.chunkSizeMinBytes
        mutating func observe(_ measurement: BandwidthMeasurement) { scheduler.record(measurement) }
        func decide(inFlightBytes: Int, totalBytes: Int64, link: Link) -> (chunk: Int, parallel: Int) {
            let context = SchedulingContext(
                roundTripTime: link.roundTripTime, failureProbability: link.failureProbability,
                inFlightBytes: inFlightBytes, minimumChunkBytes: minimumChunk, totalBytes: totalBytes,
                availableMemoryBytes: 1 << 30)
            let decision = scheduler.decide(context)
            return (decision.chunkSizeBytes, decision.parallelism)
        }
    }

    /// The fluid lower bound: seconds until the trace's cumulative capacity reaches `totalBytes`.
    static func idealTime(trace: ThroughputTrace, totalBytes: Int64) -> Double {
        let perPeriod = trace.samples.reduce(0) { $0 + $1.megabitsPerSecond * 1e6 / 8 * $1.duration }
        guard perPeriod > 0 else { return .infinity }
        var left = Double(totalBytes)
        var time = 0.0
        let periods = (left / perPeriod).rounded(.down)
        left -= periods * perPeriod
        time += periods * trace.duration
        for sample in trace.samples {
            let bytes = sample.megabitsPerSecond * 1e6 / 8 * sample.duration
            if bytes >= left { return time + left / (sample.megabitsPerSecond * 1e6 / 8) }
            left -= bytes
            time += sample.duration
        }
        return time
    }

    private struct Request {
        var size: Int
        var overheadLeft: Double
        var remaining: Double
        var failBelow: Double
        var stalled: Double = 0
    }

    /// Seconds to upload `totalBytes` over `trace` under `policy`.
    static func completionTime(
        trace: ThroughputTrace, policy: inout some Policy, totalBytes: Int64, link: Link, seed: UInt64
    ) -> Double {
        var random = SplitMix64(seed: seed)
        let samples = trace.samples
        let period = trace.duration
        guard !samples.isEmpty, period > 0 else { return .infinity }
        let dt = min(0.01, link.roundTripTime / 5)
        var time = 0.0
        var sampleIndex = 0
        var phaseStart = 0.0
        var acknowledged: Int64 = 0
        var unassigned = totalBytes
        var retries: [Int] = []
        var active: [Request] = []
        var windowBytes = 0.0
        var windowBusy = 0.0
        var windowStart = 0.0
        let streamCap = link.streamWindowBytes / link.roundTripTime
        while acknowledged < totalBytes {
            if time > 1e6 { return .infinity }
            // Fill free slots.
            let inFlight = active.reduce(0) { $0 + Int($1.remaining) }
            let decision = policy.decide(inFlightBytes: inFlight, totalBytes: totalBytes, link: link)
            while active.count < max(1, decision.parallel) && (!retries.isEmpty || unassigned > 0) {
                let size: Int
                if let retry = retries.popLast() {
                    size = retry
                } else {
                    size = Int(min(Int64(max(1, decision.chunk)), unassigned))
                    unassigned -= Int64(size)
                }
                let fails = Double.random(in: 0..<1, using: &random) < link.failureProbability
                let failBelow = fails ? Double(size) * Double.random(in: 0..<1, using: &random) : -1
                active.append(
                    Request(size: size, overheadLeft: link.roundTripTime, remaining: Double(size), failBelow: failBelow)
                )
            }
            // Capacity now.
            while time - phaseStart >= samples[sampleIndex].duration {
                phaseStart += samples[sampleIndex].duration
                sampleIndex = (sampleIndex + 1) % samples.count
            }
            let capacity = samples[sampleIndex].megabitsPerSecond * 1e6 / 8
            let transferring = active.filter { $0.overheadLeft <= 0 }.count
            let share = transferring > 0 ? min(streamCap, capacity / Double(transferring)) : 0
            var moved = 0.0
            var index = 0
            while index < active.count {
                var request = active[index]
                if request.overheadLeft > 0 {
                    request.overheadLeft -= dt
                    active[index] = request
                    index += 1
                    continue
                }
                let step = min(request.remaining, share * dt)
                request.remaining -= step
                moved += step
                request.stalled = step > 0 ? 0 : request.stalled + dt
                if request.remaining < request.failBelow || request.stalled >= link.stallTimeout {
                    retries.append(request.size)
                    active.remove(at: index)
                    continue
                }
                if request.remaining <= 0 {
                    acknowledged += Int64(request.size)
                    active.remove(at: index)
                    continue
                }
                active[index] = request
                index += 1
            }
            windowBytes += moved
            if transferring > 0 { windowBusy += dt }
            time += dt
            if time - windowStart >= 1 {
                if windowBusy > 0 {
                    policy.observe(
                        BandwidthMeasurement(
                            bitsPerSecond: windowBytes * 8 / windowBusy, duration: windowBusy, timestamp: time))
                }
                windowBytes = 0
                windowBusy = 0
                windowStart = time
            }
        }
        return time
    }
}
