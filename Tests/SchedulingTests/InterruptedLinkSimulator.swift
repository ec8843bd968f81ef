import AetherScheduling

/// A fluid simulation of one upload over a trace-driven link whose connections are all cut at a fixed period, driven
/// by the real fusion scheduler and link planner, as the uploader drives them: a request pays one round trip before
/// its bytes flow, requests in flight share the link's capacity equally, an acknowledgement feeds the scheduler a
/// measurement of the link's share, and a cut returns to the queue what the protocol does not keep.
struct InterruptedLinkSimulator {
    /// What a protocol keeps of a cut request.
    enum Granule: Sendable {
        /// Every byte that arrived (IETF, tus, native with chunk continuation).
        case bytes
        /// Only whole units (native runs without continuation).
        case units
        /// Nothing (an S3 part).
        case nothing
    }

    struct Transfer: Sendable {
        let name: String
        let unitBytes: Int
        let granule: Granule
        let maximumStreams: Int
        let minimumChunkBytes: Int
        let maximumChunkBytes: Int

        static let native = Transfer(
            name: "native", unitBytes: 1 << 20, granule: .bytes, maximumStreams: 8, minimumChunkBytes: 256 << 10,
            maximumChunkBytes: 16 << 20)
        static let s3 = Transfer(
            name: "s3", unitBytes: 5 << 20, granule: .nothing, maximumStreams: 8, minimumChunkBytes: 5 << 20,
            maximumChunkBytes: 16 << 20)
        static let ietf = Transfer(
            name: "ietf", unitBytes: 64 << 10, granule: .bytes, maximumStreams: 1, minimumChunkBytes: 256 << 10,
            maximumChunkBytes: 16 << 20)
    }

    struct Link: Sendable {
        let trace: ThroughputTrace
        /// Seconds into the trace the upload starts at (the trace loops).
        let start: Double
        let roundTripTime: Double
        /// Every connection is cut every `period` seconds, for `window` seconds (connections refused meanwhile).
        let period: Double
        let window: Double
    }

    /// One interval between two cuts: when it began and ended, what the link could carry in it, and the bytes the
    /// destination held at each end.
    struct Interval: Sendable {
        let begin: Double
        let end: Double
        let capacityBytes: Double
        let heldAtBegin: Int64
        let heldAtEnd: Int64
    }

    struct Result: Sendable {
        let completed: Bool
        let seconds: Double
        let intervals: [Interval]
        let bytesSent: Double
        let idealSeconds: Double
    }

    private struct Request {
        let offset: Int64
        let bytes: Int64
        let started: Double
        var delivered: Double = 0
    }

    let link: Link
    let protocolUsed: Transfer
    let size: Int64
    /// Seconds a refused request waits before the next attempt.
    let retryDelay = 0.5
    let step = 0.1

    /// Capacity of the link in bytes per second at `time` since the upload began (0 in a cut window).
    func capacity(at time: Double) -> Double {
        if inWindow(time) { return 0 }
        let total = link.trace.duration
        guard total > 0 else { return 0 }
        var position = (link.start + time).truncatingRemainder(dividingBy: total)
        for sample in link.trace.samples {
            if position < sample.duration { return sample.megabitsPerSecond * 1e6 / 8 }
            position -= sample.duration
        }
        return 0
    }

    func inWindow(_ time: Double) -> Bool {
        guard time >= link.period else { return false }
        return time.truncatingRemainder(dividingBy: link.period) < link.window
    }

    /// Runs the upload until it completes or `limit` seconds pass.
    func run(limit: Double) -> Result {
        var scheduler = FusionSchedulerStateMachine()
        var history = InterruptionHistory()
        var pending: [(offset: Int64, bytes: Int64)] = [(0, size)]
        var requests: [Request] = []
        var held: Int64 = 0
        var sent = 0.0
        var time = 0.0
        var lastAcknowledgement: Double?
        var nextAttempt = 0.0
        var plan = LinkPlan(streams: 1, requestBytes: protocolUsed.unitBytes, holdsBack: false, budgetBytes: nil)
        var intervals: [Interval] = []
        var intervalBegin = 0.0
        var intervalHeld: Int64 = 0
        var intervalCapacity = 0.0
        var wasInWindow = false

        func replan(_ now: Double) {
            let inFlight = requests.reduce(Int64(0)) { $0 + $1.bytes - Int64($1.delivered) }
            let decision = scheduler.decide(
                SchedulingContext(
                    roundTripTime: link.roundTripTime, inFlightBytes: Int(inFlight),
                    minimumChunkBytes: protocolUsed.minimumChunkBytes,
                    maximumChunkBytes: protocolUsed.maximumChunkBytes, totalBytes: size,
                    parallelismCap: protocolUsed.maximumStreams,
                    secondsBetweenInterruptions: history.meanInterval(at: now)))
            plan = LinkPlanner.plan(
                decision,
                keeping: LinkPlanner.Keeping(
                    unitBytes: protocolUsed.unitBytes, keepsPrefix: protocolUsed.granule != .nothing),
                roundTripTime: link.roundTripTime, interruptions: history.forecast(at: now))
        }

        func cut(_ now: Double) {
            for request in requests {
                let kept: Int64
                switch protocolUsed.granule {
                case .bytes: kept = Int64(request.delivered)
                case .units:
                    kept = Int64(request.delivered) / Int64(protocolUsed.unitBytes) * Int64(protocolUsed.unitBytes)
                case .nothing: kept = 0
                }
                held += kept
                if kept < request.bytes { pending.insert((request.offset + kept, request.bytes - kept), at: 0) }
            }
            requests.removeAll()
            history.note(at: now)
            replan(now)
        }

        while held < size, time < limit {
            let window = inWindow(time)
            if window, !wasInWindow {
                // What the cut keeps counts for the interval it ends.
                cut(time)
                intervals.append(
                    Interval(
                        begin: intervalBegin, end: time, capacityBytes: intervalCapacity, heldAtBegin: intervalHeld,
                        heldAtEnd: held))
                nextAttempt = time
            }
            if !window, wasInWindow {
                intervalBegin = time
                intervalHeld = held
                intervalCapacity = 0
            }
            wasInWindow = window
            // Start requests while streams are free (a refused attempt during a cut is one more failure).
            while held + requests.reduce(0, { $0 + $1.bytes }) < size, requests.count < max(1, plan.streams),
                !plan.holdsBack, time >= nextAttempt, !pending.isEmpty
            {
                if window {
                    history.note(at: time)
                    nextAttempt = time + retryDelay
                    replan(time)
                    break
                }
                let first = pending.removeFirst()
                let bytes = min(first.bytes, Int64(plan.requestBytes))
                if bytes < first.bytes { pending.insert((first.offset + bytes, first.bytes - bytes), at: 0) }
                requests.append(Request(offset: first.offset, bytes: bytes, started: time))
            }
            let capacity = capacity(at: time)
            intervalCapacity += capacity * step
            let flowing = requests.indices.filter { time - requests[$0].started >= link.roundTripTime }
            if !flowing.isEmpty {
                let share = capacity * step / Double(flowing.count)
                for index in flowing {
                    let room = Double(requests[index].bytes) - requests[index].delivered
                    let moved = min(room, share)
                    requests[index].delivered += moved
                    sent += moved
                }
            }
            time += step
            var finished = false
            requests.removeAll { request in
                guard request.delivered >= Double(request.bytes) - 0.5 else { return false }
                held += request.bytes
                let seconds = time - request.started
                let span = min(seconds, lastAcknowledgement.map { time - $0 } ?? seconds)
                lastAcknowledgement = time
                if span > 0 {
                    scheduler.record(
                        BandwidthMeasurement(bytes: Int(request.bytes), duration: span, timestamp: time))
                }
                finished = true
                return true
            }
            if finished { replan(time) }
            if plan.holdsBack { replan(time) }
        }
        return Result(
            completed: held >= size, seconds: time, intervals: intervals, bytesSent: sent,
            idealSeconds: idealSeconds(limit: limit))
    }

    /// The time the link's capacity (cut windows included, as zero) takes to carry the file: no upload is faster.
    func idealSeconds(limit: Double) -> Double {
        var carried = 0.0
        var time = 0.0
        while carried < Double(size), time < limit {
            carried += capacity(at: time) * step
            time += step
        }
        return carried >= Double(size) ? time : .infinity
    }
}
