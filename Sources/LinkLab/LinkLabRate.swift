/// The service rate of one direction: constant, or a throughput trace replayed from a start offset (repeated from
/// its beginning when the lab outlives it).
public struct LinkLabRate: Sendable, Equatable {
    /// One step of a trace: `megabitsPerSecond` for `duration` seconds (0 is an outage).
    public struct Slot: Sendable, Equatable {
        /// Seconds (> 0).
        public var duration: Double
        /// Mbit/s (>= 0).
        public var megabitsPerSecond: Double

        /// A slot of `duration` seconds at `megabitsPerSecond`.
        public init(duration: Double, megabitsPerSecond: Double) {
            self.duration = duration
            self.megabitsPerSecond = megabitsPerSecond
        }
    }

    /// The steps of one cycle (a constant rate is one slot of infinite length).
    public let slots: [Slot]
    /// Seconds into the trace at the lab's clock zero.
    public let startOffset: Double

    private init(slots: [Slot], startOffset: Double) {
        self.slots = slots
        self.startOffset = startOffset
    }

    /// A constant rate.
    public static func constant(megabitsPerSecond: Double) -> LinkLabRate {
        LinkLabRate(slots: [Slot(duration: .infinity, megabitsPerSecond: megabitsPerSecond)], startOffset: 0)
    }

    /// A trace of `slots`, played from `startOffset` seconds into it.
    public static func trace(_ slots: [Slot], startingAt startOffset: Double = 0) -> LinkLabRate {
        LinkLabRate(slots: slots, startOffset: startOffset)
    }

    /// Whether this is a constant rate.
    public var isConstant: Bool { slots.count == 1 && slots[0].duration == .infinity }

    /// Seconds of one cycle of the trace (infinite for a constant rate).
    public var cycleLength: Double { slots.reduce(0) { $0 + $1.duration } }

    /// The mean rate over one cycle, Mbit/s.
    public var meanMegabitsPerSecond: Double {
        if isConstant { return slots[0].megabitsPerSecond }
        return slots.reduce(0) { $0 + $1.duration * $1.megabitsPerSecond } / cycleLength
    }

    func validate(name: String) throws(LinkLabError) {
        guard !slots.isEmpty else { throw LinkLabError(.invalidConfiguration, "\(name) rate trace has no slots") }
        guard startOffset.isFinite, startOffset >= 0 else {
            throw LinkLabError(.invalidConfiguration, "\(name) trace start offset \(startOffset) s is out of range")
        }
        if isConstant {
            let rate = slots[0].megabitsPerSecond
            guard rate.isFinite, rate >= 0.01, rate <= 100_000 else {
                throw LinkLabError(.invalidConfiguration, "\(name) rate \(rate) Mbit/s is not in 0.01...100000")
            }
            return
        }
        for (index, slot) in slots.enumerated() {
            guard slot.duration.isFinite, slot.duration >= 0.001, slot.megabitsPerSecond.isFinite,
                slot.megabitsPerSecond >= 0, slot.megabitsPerSecond <= 100_000
            else {
                throw LinkLabError(
                    .invalidConfiguration,
                    "\(name) trace slot \(index) (\(slot.duration) s at \(slot.megabitsPerSecond) Mbit/s) is out of range"
                )
            }
        }
        guard meanMegabitsPerSecond >= 0.01 else {
            throw LinkLabError(.invalidConfiguration, "\(name) trace carries (almost) nothing: mean below 0.01 Mbit/s")
        }
    }
}
