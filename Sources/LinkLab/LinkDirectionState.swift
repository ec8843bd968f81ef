import AetherIO

/// One direction of the delay line, as a pure state machine over a monotonic clock (nanoseconds): a drop-tail
/// queue in front of a fluid rate server (the head packet leaves when the rate has served its last byte), i.i.d.
/// loss on what leaves the server, then a fixed delay. The relay feeds it packets and asks it what to release; the
/// tests drive it with a made-up clock.
struct LinkDirectionState: Sendable {
    private(set) var schedule: RateSchedule
    /// The clock reading of the schedule's time zero.
    private(set) var epoch: Int64
    private let delay: Int64
    private let lossRate: Double
    private let queueLimit: LinkLabQueueLimit
    private var random: SplitMix64

    private var queue = PacketQueue()
    /// Bytes in `queue` (the packet in service included).
    private(set) var queuedBytes = 0
    /// When the head packet of `queue` leaves the rate server.
    private var headDeparture: Int64?
    private var delayLine = PacketQueue()
    /// What this direction saw.
    var counters = LinkLabCounters.Direction()

    init(_ direction: LinkLabDirection, epoch: Int64, seed: UInt64) {
        schedule = RateSchedule(rate: direction.rate, outages: direction.outages)
        self.epoch = epoch
        delay = RateSchedule.nanoseconds(direction.delay)
        lossRate = direction.lossRate
        queueLimit = direction.queueLimit
        random = SplitMix64(seed: seed)
    }

    /// The queue's limit in bytes at `now`.
    func queueLimitBytes(at now: Int64) -> Int {
        queueLimit.bytes(atBitsPerSecond: schedule.bitsPerSecond(at: now - epoch))
    }

    /// A packet arrives at `now`: queued, or dropped at the tail (false) when it would pass the limit.
    @discardableResult
    mutating func offer(_ bytes: [UInt8], at now: Int64) -> Bool {
        counters.offered.add(bytes.count)
        guard queuedBytes + bytes.count <= queueLimitBytes(at: now) else {
            counters.droppedQueue.add(bytes.count)
            return false
        }
        let wasEmpty = queue.isEmpty
        queue.append(LabPacket(bytes: bytes, time: now))
        queuedBytes += bytes.count
        if wasEmpty { headDeparture = departure(of: bytes.count, from: now) }
        return true
    }

    /// Moves every packet the server has finished by `now` through the loss draw into the delay line.
    mutating func advance(to now: Int64) {
        while let departure = headDeparture, departure <= now, let packet = queue.popFirst() {
            queuedBytes -= packet.bytes.count
            if lossRate > 0 && Double(random.next() >> 11) / 9_007_199_254_740_992 < lossRate {
                counters.droppedLoss.add(packet.bytes.count)
            } else {
                delayLine.append(LabPacket(bytes: packet.bytes, time: departure + delay))
            }
            headDeparture = queue.first.map { self.departure(of: $0.bytes.count, from: departure) }
        }
    }

    /// The next packet the delay line releases by `now`, with the time it was due.
    mutating func release(by now: Int64) -> LabPacket? {
        guard let first = delayLine.first, first.time <= now else { return nil }
        return delayLine.popFirst()
    }

    /// The earliest time something happens (a departure or a release), nil when the direction is empty.
    var nextEvent: Int64? {
        switch (headDeparture, delayLine.first?.time) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }

    /// Packets queued or in the delay line.
    var packetsInFlight: Int { queue.count + delayLine.count }

    /// Drops everything queued and in the delay line (a path change), counted as path drops.
    mutating func flush() {
        let queued = queue.removeAll()
        let delayed = delayLine.removeAll()
        counters.droppedPath.add(packets: queued.packets + delayed.packets, bytes: queued.bytes + delayed.bytes)
        queuedBytes = 0
        headDeparture = nil
    }

    /// Moves the schedule's time zero to `now` (the head packet's service restarts from there).
    mutating func restartClock(at now: Int64) {
        epoch = now
        headDeparture = queue.first.map { departure(of: $0.bytes.count, from: now) }
    }

    private func departure(of bytes: Int, from start: Int64) -> Int64 {
        let finish = schedule.finish(bytes: bytes, from: start - epoch)
        return finish == .max ? .max : finish + epoch
    }
}
