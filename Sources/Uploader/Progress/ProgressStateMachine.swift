/// The progress of one upload as a pure value: four byte counters, the display filter's window, and the
/// safety valves. `ProgressLayers` holds it behind a lock; nothing here reads a clock.
struct ProgressStateMachine {
    typealias Event = ProgressLayers.Event
    typealias Snapshot = ProgressLayers.Snapshot

    private struct Sample {
        var time: Int64
        var raw: Double
        var acknowledged: UInt64
    }

    private(set) var totalBytes: UInt64
    private(set) var wire: UInt64 = 0
    private(set) var acknowledged: UInt64 = 0
    private(set) var merkleVerified: UInt64 = 0
    private(set) var serverReconstructed: UInt64 = 0
    private(set) var displayed: Double = 0
    private(set) var wireAckDivergent = false
    private(set) var ackMerkleDivergent = false
    private var window: [Sample] = []
    private let filter: SavitzkyGolay

    init(totalBytes: UInt64, filter: SavitzkyGolay = .display) {
        self.totalBytes = totalBytes
        self.filter = filter
    }

    // MARK: Layers

    mutating func wireSent(_ bytes: UInt64) -> [Event] {
        wire = min(totalBytes, wire.addingClamped(bytes))
        return valves()
    }

    mutating func wireFailed(_ bytes: UInt64) -> [Event] {
        wire = max(acknowledged, wire - min(wire, bytes))
        return valves()
    }

    mutating func acknowledged(_ bytes: UInt64, merkleVerified verified: Bool) -> [Event] {
        acknowledged = min(totalBytes, acknowledged.addingClamped(bytes))
        wire = max(wire, acknowledged)
        if verified { merkleVerified = min(acknowledged, merkleVerified.addingClamped(bytes)) }
        return valves()
    }

    mutating func merkleVerified(_ bytes: UInt64) -> [Event] {
        merkleVerified = min(acknowledged, merkleVerified.addingClamped(bytes))
        return valves()
    }

    mutating func serverReconstructed(_ bytes: UInt64) -> [Event] {
        serverReconstructed = min(totalBytes, serverReconstructed.addingClamped(bytes))
        return valves()
    }

    /// A growing source (`--follow`) learned more of its length; a total never shrinks.
    mutating func setTotalBytes(_ total: UInt64) -> [Event] {
        totalBytes = max(totalBytes, total)
        return valves()
    }

    // MARK: Display

    /// Every byte acknowledged and Merkle-verified.
    var finished: Bool { acknowledged == totalBytes && merkleVerified == totalBytes }

    /// The acknowledged share, 0...1 (an empty upload is done when it is finished).
    var rawFraction: Double {
        totalBytes == 0 ? (finished ? 1 : 0) : Double(acknowledged) / Double(totalBytes)
    }

    /// Takes one display sample at `time` (monotonic nanoseconds) and returns the state.
    mutating func sample(at time: Int64) -> Snapshot {
        let raw = rawFraction
        window.append(Sample(time: time, raw: raw, acknowledged: acknowledged))
        if window.count > filter.coefficients.count { window.removeFirst(window.count - filter.coefficients.count) }
        let smoothed = filter.apply(window.map(\.raw)) ?? raw
        // Never show more than is acknowledged, never less than nothing.
        let target = Self.decelerated(min(raw, max(0, smoothed)))
        displayed = finished ? 1 : max(displayed, target)
        return snapshot
    }

    /// The last-5% deceleration (upload-engine v2.2, ProgressLayers): below 95% the display follows
    /// the value; above it, with u the share of the last 5% acknowledged, it shows 0.95 + 0.05 (u - u^2/2), so it
    /// moves at (1 - u) times the speed of the acknowledgements and reaches 97.5% when all are in. The last
    /// 2.5% appear only when every byte is acknowledged and Merkle-verified.
    static func decelerated(_ value: Double) -> Double {
        guard value > 0.95 else { return value }
        let u = min(1, (value - 0.95) / 0.05)
        return 0.95 + 0.05 * (u - u * u / 2)
    }

    var snapshot: Snapshot {
        var rate: Double?
        var eta: Double?
        if let first = window.first, let last = window.last, last.time > first.time {
            let bytes = Double(last.acknowledged - min(last.acknowledged, first.acknowledged))
            let perSecond = bytes / (Double(last.time - first.time) / 1e9)
            rate = perSecond
            if perSecond > 0 { eta = Double(totalBytes - min(totalBytes, last.acknowledged)) / perSecond }
        }
        return Snapshot(
            totalBytes: totalBytes, wire: wire, acknowledged: acknowledged, merkleVerified: merkleVerified,
            serverReconstructed: serverReconstructed, displayedFraction: displayed, bytesPerSecond: rate,
            secondsRemaining: eta, wireAckDivergent: wireAckDivergent, ackMerkleDivergent: ackMerkleDivergent)
    }

    // MARK: Safety valves

    /// The wire-ack valve fires when more than 8% of the total was handed to the transport without an
    /// acknowledgement; the ack-Merkle valve when any acknowledged byte is not Merkle-verified. Each reports
    /// once when it opens and once when it closes.
    private mutating func valves() -> [Event] {
        var events: [Event] = []
        let gap = wire - min(wire, acknowledged)
        let share = totalBytes == 0 ? 0 : Double(gap) / Double(totalBytes)
        let wireOpen = share > ProgressLayers.wireAckDivergenceLimit
        if wireOpen != wireAckDivergent {
            wireAckDivergent = wireOpen
            events.append(wireOpen ? .wireAckDivergence(share: share) : .wireAckConverged)
        }
        let unverified = acknowledged - min(acknowledged, merkleVerified)
        let merkleOpen = unverified > 0
        if merkleOpen != ackMerkleDivergent {
            ackMerkleDivergent = merkleOpen
            events.append(merkleOpen ? .ackMerkleDivergence(unverifiedBytes: unverified) : .ackMerkleConverged)
        }
        return events
    }
}

extension UInt64 {
    fileprivate func addingClamped(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
