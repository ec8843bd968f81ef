/// What a `LinkLab` emulates: per direction a rate (constant or a trace), a drop-tail queue, i.i.d. loss and a fixed
/// one-way delay; path changes; and the client namespace's default TCP congestion control.
///
/// Times are seconds. The uplink carries what the client sends to the server, the downlink the replies.
public struct LinkLabConfiguration: Sendable {
    /// Client to server.
    public var uplink: LinkLabDirection
    /// Server to client.
    public var downlink: LinkLabDirection
    /// Scheduled path changes, or none (`LinkLab.changePath` makes one at any time).
    public var pathChanges: LinkLabPathChanges?
    /// The client namespace's `net.ipv4.tcp_congestion_control` (every new connection of the client uses it).
    public var clientCongestionControl: LinkLabCongestionControl
    /// Seeds the loss draws of both directions (the same seed and the same packets lose the same packets).
    public var seed: UInt64

    /// A configuration; `seed` defaults to a random one.
    public init(
        uplink: LinkLabDirection, downlink: LinkLabDirection, pathChanges: LinkLabPathChanges? = nil,
        clientCongestionControl: LinkLabCongestionControl = .cubic, seed: UInt64 = .random(in: 0...UInt64.max)
    ) {
        self.uplink = uplink
        self.downlink = downlink
        self.pathChanges = pathChanges
        self.clientCongestionControl = clientCongestionControl
        self.seed = seed
    }

    /// Throws `.invalidConfiguration` naming the first value out of range.
    public func validate() throws(LinkLabError) {
        try uplink.validate(name: "uplink")
        try downlink.validate(name: "downlink")
        try pathChanges?.validate()
    }
}

/// One direction of the link: packets queue (drop-tail), are served at the rate, lost at random, then delayed.
public struct LinkLabDirection: Sendable {
    /// One-way delay after the rate server, seconds (0...10).
    public var delay: Double
    /// Probability that a packet leaving the rate server is lost, i.i.d. (0 <= p < 1).
    public var lossRate: Double
    /// The service rate over time.
    public var rate: LinkLabRate
    /// How much the queue in front of the rate server holds.
    public var queueLimit: LinkLabQueueLimit
    /// Windows of rate 0 (packets wait in the queue, up to its limit), from the lab's clock zero.
    public var outages: [LinkLabOutage]

    /// A direction; by default a queue of 100 ms at the current rate and no outages.
    public init(
        delay: Double, lossRate: Double = 0, rate: LinkLabRate, queueLimit: LinkLabQueueLimit = .time(0.1),
        outages: [LinkLabOutage] = []
    ) {
        self.delay = delay
        self.lossRate = lossRate
        self.rate = rate
        self.queueLimit = queueLimit
        self.outages = outages
    }

    /// Megabits this direction can carry from `from` to `to` seconds after the lab's clock zero: the rate's
    /// integral with the outages taken out (what a sender that never idles could put through).
    public func capacityMegabits(from: Double, to: Double) -> Double {
        RateSchedule(rate: rate, outages: outages).capacityBits(
            from: RateSchedule.nanoseconds(from), to: RateSchedule.nanoseconds(to)) / 1e6
    }

    func validate(name: String) throws(LinkLabError) {
        guard delay.isFinite, delay >= 0, delay <= 10 else {
            throw LinkLabError(.invalidConfiguration, "\(name) delay \(delay) s is not in 0...10 s")
        }
        guard lossRate.isFinite, lossRate >= 0, lossRate < 1 else {
            throw LinkLabError(.invalidConfiguration, "\(name) loss rate \(lossRate) is not in [0, 1)")
        }
        try rate.validate(name: name)
        switch queueLimit {
        case .bytes(let bytes) where bytes < LinkLabQueueLimit.minimumBytes:
            throw LinkLabError(
                .invalidConfiguration, "\(name) queue limit \(bytes) bytes is below \(LinkLabQueueLimit.minimumBytes)")
        case .time(let seconds) where !(seconds.isFinite && seconds > 0 && seconds <= 60):
            throw LinkLabError(.invalidConfiguration, "\(name) queue limit \(seconds) s is not in (0, 60] s")
        default: break
        }
        for outage in outages {
            guard outage.start.isFinite, outage.start >= 0, outage.length.isFinite, outage.length > 0 else {
                throw LinkLabError(
                    .invalidConfiguration, "\(name) outage at \(outage.start) s for \(outage.length) s is out of range")
            }
        }
    }
}

/// The limit of a direction's drop-tail queue (the packet in service counts as queued).
public enum LinkLabQueueLimit: Sendable, Equatable {
    /// A fixed number of bytes (IP packets, headers included); at least `minimumBytes`.
    case bytes(Int)
    /// What the current rate serves in this many seconds, never less than `minimumBytes` (so an outage holds two
    /// full packets rather than none).
    case time(Double)

    /// Two full 1500-byte packets.
    public static let minimumBytes = 3000

    /// The limit in bytes while the rate is `bitsPerSecond`.
    func bytes(atBitsPerSecond bitsPerSecond: Double) -> Int {
        switch self {
        case .bytes(let bytes): return bytes
        case .time(let seconds):
            let bytes = bitsPerSecond * seconds / 8
            return bytes.isFinite ? max(Self.minimumBytes, Int(min(bytes, 1e12))) : Self.minimumBytes
        }
    }
}

/// A window of rate 0 on one direction.
public struct LinkLabOutage: Sendable, Equatable {
    /// Seconds from the lab's clock zero.
    public var start: Double
    /// Seconds.
    public var length: Double

    /// An outage of `length` seconds at `start`.
    public init(start: Double, length: Double) {
        self.start = start
        self.length = length
    }
}

/// Path changes every `period` seconds, the first at `first`, each cutting the path for `window` seconds.
public struct LinkLabPathChanges: Sendable, Equatable {
    /// What a change does.
    public var kind: LinkLabPathChangeKind
    /// Seconds from the lab's clock zero to the first change.
    public var first: Double
    /// Seconds between changes.
    public var period: Double
    /// Seconds each change cuts the path (shorter than `period`).
    public var window: Double

    /// Changes of `kind` every `period` s (the first at `first`, by default `period`), each `window` s long.
    public init(kind: LinkLabPathChangeKind, every period: Double, window: Double = 1.5, first: Double? = nil) {
        self.kind = kind
        self.period = period
        self.window = window
        self.first = first ?? period
    }

    func validate() throws(LinkLabError) {
        guard first.isFinite, first >= 0, period.isFinite, window.isFinite, window > 0, period > window else {
            throw LinkLabError(
                .invalidConfiguration,
                "path changes every \(period) s for \(window) s from \(first) s: need 0 < window < period, first >= 0")
        }
    }
}

/// What a path change does to the connections crossing the link.
public enum LinkLabPathChangeKind: Sendable, Equatable {
    /// Every TCP connection is reset at once (a reset to both ends of each connection the lab has seen), the queues
    /// and delay lines are emptied, and for the window every TCP segment either end sends is answered with a reset
    /// (a connection attempt is refused) and everything else is dropped: a phone changing network whose carrier
    /// resets what it cannot carry.
    case resetConnections
    /// The client's address is replaced by a new one: the queues and delay lines are emptied, the client's
    /// connections are aborted (a reset to the client's end only, as a phone's system closes the sockets of a
    /// network that went away), nothing crosses during the window, and from then on packets of the old address are
    /// dropped (the server's end of an old connection hears nothing more). New connections use the new address.
    case replaceClientAddress
}

/// The TCP congestion controls the lab can make a namespace's default (the host must have them built in).
public enum LinkLabCongestionControl: String, Sendable, CaseIterable {
    /// Linux's default for most systems, and what phones run.
    case cubic
    /// Google's BBR (v1 in Linux).
    case bbr
    /// NewReno, the model behind the Mathis formula.
    case reno
}

/// The two network namespaces of a lab.
public enum LinkLabSide: String, Sendable, CaseIterable {
    /// Where uploads start (the phone).
    case client
    /// Where the servers listen.
    case server
}
