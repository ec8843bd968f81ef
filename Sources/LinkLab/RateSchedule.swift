/// A direction's rate over time in nanoseconds since the lab's clock zero: the trace's slots (cycled, from its start
/// offset) with the outages (rate 0) laid over them. Pure: the relay and the tests ask it, nothing else.
struct RateSchedule: Sendable {
    /// Slot starts within one cycle, nanoseconds, ascending from 0.
    private let starts: [Int64]
    /// Bits per second of each slot.
    private let rates: [Double]
    /// Nanoseconds of one cycle; nil for a constant rate.
    private let cycle: Int64?
    /// Nanoseconds into the cycle at clock zero.
    private let offset: Int64
    /// Outages as [start, end) nanoseconds, sorted and merged.
    private let outages: [(start: Int64, end: Int64)]

    init(rate: LinkLabRate, outages: [LinkLabOutage]) {
        if rate.isConstant {
            starts = [0]
            rates = [rate.slots[0].megabitsPerSecond * 1e6]
            cycle = nil
            offset = 0
        } else {
            var starts: [Int64] = []
            var clock: Int64 = 0
            for slot in rate.slots {
                starts.append(clock)
                clock += Self.nanoseconds(slot.duration)
            }
            self.starts = starts
            rates = rate.slots.map { $0.megabitsPerSecond * 1e6 }
            cycle = clock
            offset = Self.nanoseconds(rate.startOffset) % clock
        }
        var merged: [(start: Int64, end: Int64)] = []
        for outage in outages.sorted(by: { $0.start < $1.start }) {
            let start = Self.nanoseconds(outage.start)
            let end = start + Self.nanoseconds(outage.length)
            if let last = merged.last, start <= last.end {
                merged[merged.count - 1].end = max(last.end, end)
            } else {
                merged.append((start, end))
            }
        }
        self.outages = merged
    }

    /// Seconds as nanoseconds, clamped to about 100 years.
    static func nanoseconds(_ seconds: Double) -> Int64 {
        Int64((min(max(seconds, 0), 3e9) * 1e9).rounded())
    }

    /// Bits per second at `time` (0 inside an outage).
    func bitsPerSecond(at time: Int64) -> Double {
        if outage(containing: time) != nil { return 0 }
        return rates[slot(at: time)]
    }

    /// The first time after `time` at which the rate may change (a slot or outage edge); `Int64.max` if never.
    func nextChange(after time: Int64) -> Int64 {
        var next = Int64.max
        if let cycle {
            let position = (max(time, 0) + offset) % cycle
            let index = slot(at: time)
            let slotEnd = index + 1 < starts.count ? starts[index + 1] : cycle
            next = max(time, 0) + (slotEnd - position)
        }
        if let index = outage(containing: time) {
            next = min(next, outages[index].end)
        } else if let upcoming = outages.first(where: { $0.start > time }) {
            next = min(next, upcoming.start)
        }
        return next
    }

    /// When the last of `bytes` is served, service starting at `time`; `Int64.max` if the rate never serves them.
    func finish(bytes: Int, from time: Int64) -> Int64 {
        var remaining = Double(bytes) * 8
        var clock = time
        // A bound on the segments walked: a trace of long zero stretches still ends (its mean rate is positive).
        for _ in 0..<100_000 {
            let rate = bitsPerSecond(at: clock)
            let next = nextChange(after: clock)
            if rate > 0 {
                let needed = remaining / rate * 1e9
                if next == .max || Double(clock) + needed <= Double(next) {
                    return clock + Int64(needed.rounded(.up))
                }
                remaining -= rate * Double(next - clock) / 1e9
            }
            guard next != .max else { return .max }
            clock = next
        }
        return .max
    }

    /// Bits served at full occupancy from `from` to `to` (the capacity of that span, outages included as 0).
    func capacityBits(from: Int64, to: Int64) -> Double {
        var total = 0.0
        var clock = from
        while clock < to {
            let next = min(nextChange(after: clock), to)
            total += bitsPerSecond(at: clock) * Double(next - clock) / 1e9
            clock = next
        }
        return total
    }

    private func slot(at time: Int64) -> Int {
        guard let cycle else { return 0 }
        let position = (max(time, 0) + offset) % cycle
        // The last start <= position (binary search).
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return low
    }

    private func outage(containing time: Int64) -> Int? {
        outages.firstIndex { $0.start <= time && time < $0.end }
    }
}
