/// What a lab's relay has counted since the lab started: per direction, the packets offered, delivered and dropped
/// (by cause); the path changes; the relay's CPU time and how late it released packets.
public struct LinkLabCounters: Sendable, Equatable {
    /// A number of packets and their bytes (IP packets, headers included).
    public struct Traffic: Sendable, Equatable {
        /// Packets.
        public var packets: Int64 = 0
        /// Bytes.
        public var bytes: Int64 = 0

        /// No traffic.
        public init() {}

        mutating func add(_ bytes: Int) { add(packets: 1, bytes: Int64(bytes)) }

        mutating func add(packets: Int64, bytes: Int64) {
            self.packets += packets
            self.bytes += bytes
        }

        /// The difference from an earlier reading.
        public func since(_ earlier: Traffic) -> Traffic {
            var result = Traffic()
            result.add(packets: packets - earlier.packets, bytes: bytes - earlier.bytes)
            return result
        }
    }

    /// One direction's counts.
    public struct Direction: Sendable, Equatable {
        /// Read from the sending side's TUN device.
        public var offered = Traffic()
        /// Written to the receiving side's TUN device.
        public var delivered = Traffic()
        /// TCP payload bytes among `delivered` (headers and options left out): what a transfer really moved.
        public var deliveredTCPPayloadBytes: Int64 = 0
        /// Dropped at the tail of the queue (over its limit).
        public var droppedQueue = Traffic()
        /// Lost at random (the loss rate).
        public var droppedLoss = Traffic()
        /// Dropped by a path change: emptied queues, the cut window, packets of a replaced address.
        public var droppedPath = Traffic()
        /// Not carried for another reason: not IPv4, or the receiving device refused it.
        public var droppedOther = Traffic()
        /// TCP resets the lab sent toward this direction's receiver (path changes).
        public var resetsInjected: Int64 = 0

        /// Nothing counted.
        public init() {}

        /// Every drop, whatever its cause.
        public var dropped: Traffic {
            var total = Traffic()
            for part in [droppedQueue, droppedLoss, droppedPath, droppedOther] {
                total.add(packets: part.packets, bytes: part.bytes)
            }
            return total
        }

        /// The difference from an earlier reading.
        public func since(_ earlier: Direction) -> Direction {
            var result = Direction()
            result.offered = offered.since(earlier.offered)
            result.delivered = delivered.since(earlier.delivered)
            result.deliveredTCPPayloadBytes = deliveredTCPPayloadBytes - earlier.deliveredTCPPayloadBytes
            result.droppedQueue = droppedQueue.since(earlier.droppedQueue)
            result.droppedLoss = droppedLoss.since(earlier.droppedLoss)
            result.droppedPath = droppedPath.since(earlier.droppedPath)
            result.droppedOther = droppedOther.since(earlier.droppedOther)
            result.resetsInjected = resetsInjected - earlier.resetsInjected
            return result
        }
    }

    /// Client to server.
    public var uplink = Direction()
    /// Server to client.
    public var downlink = Direction()
    /// Path changes begun.
    public var pathChanges: Int64 = 0
    /// Seconds of CPU the relay thread used.
    public var relayCPUSeconds: Double = 0
    /// Seconds of the relay's life (CPU time over this is its share of one core).
    public var relaySeconds: Double = 0
    /// Whether the relay runs at a real-time priority (SCHED_FIFO); without it its lateness grows under load.
    public var realTimePriority = false
    /// How late each packet left the delay line against the time it was due.
    public var lateness = LatenessHistogram()

    /// Nothing counted.
    public init() {}

    /// The difference from an earlier reading (`realTimePriority` is this reading's).
    public func since(_ earlier: LinkLabCounters) -> LinkLabCounters {
        var result = LinkLabCounters()
        result.uplink = uplink.since(earlier.uplink)
        result.downlink = downlink.since(earlier.downlink)
        result.pathChanges = pathChanges - earlier.pathChanges
        result.relayCPUSeconds = relayCPUSeconds - earlier.relayCPUSeconds
        result.relaySeconds = relaySeconds - earlier.relaySeconds
        result.realTimePriority = realTimePriority
        result.lateness = lateness.since(earlier.lateness)
        return result
    }
}

/// A histogram of release lateness in microseconds: 1 us buckets below 1 ms, 10 us to 10 ms, 100 us to 100 ms,
/// and one bucket above.
public struct LatenessHistogram: Sendable, Equatable {
    private static let bucketCount = 1000 + 900 + 900 + 1
    private var buckets = [Int64](repeating: 0, count: bucketCount)
    /// Samples recorded.
    public private(set) var count: Int64 = 0
    /// The largest sample, microseconds.
    public private(set) var maximumMicroseconds: Int64 = 0

    /// No samples.
    public init() {}

    /// Records a lateness of `nanoseconds` (negative counts as 0).
    mutating func record(nanoseconds: Int64) {
        let micro = max(0, nanoseconds / 1000)
        buckets[Self.bucket(micro)] += 1
        count += 1
        maximumMicroseconds = max(maximumMicroseconds, micro)
    }

    private static func bucket(_ micro: Int64) -> Int {
        if micro < 1000 { return Int(micro) }
        if micro < 10_000 { return 1000 + Int((micro - 1000) / 10) }
        if micro < 100_000 { return 1900 + Int((micro - 10_000) / 100) }
        return bucketCount - 1
    }

    private static func lowerBound(_ bucket: Int) -> Int64 {
        if bucket < 1000 { return Int64(bucket) }
        if bucket < 1900 { return 1000 + Int64(bucket - 1000) * 10 }
        if bucket < 2800 { return 10_000 + Int64(bucket - 1900) * 100 }
        return 100_000
    }

    /// The lateness below which `fraction` of the samples fall (a bucket's lower edge), microseconds; nil when empty.
    public func percentileMicroseconds(_ fraction: Double) -> Int64? {
        guard count > 0 else { return nil }
        let rank = max(1, Int64((Double(count) * min(max(fraction, 0), 1)).rounded(.up)))
        var seen: Int64 = 0
        for (index, value) in buckets.enumerated() {
            seen += value
            if seen >= rank { return Self.lowerBound(index) }
        }
        return maximumMicroseconds
    }

    /// The samples recorded since an earlier reading (the maximum is this reading's).
    public func since(_ earlier: LatenessHistogram) -> LatenessHistogram {
        var result = LatenessHistogram()
        for index in buckets.indices { result.buckets[index] = buckets[index] - earlier.buckets[index] }
        result.count = count - earlier.count
        result.maximumMicroseconds = maximumMicroseconds
        return result
    }
}
