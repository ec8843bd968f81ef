import AetherLinkLab
import AetherScheduling
import Foundation

/// A real LTE throughput trace replayed on a `LinkLab` second by second (second i is the trace's mean over that
/// second from the start offset, repeated from there when the upload outlasts it), with every connection reset for
/// 1.5 s every 20 s.
struct LinkTrace: Sendable {
    /// The trace's file name.
    let name: String
    /// Mbit/s of each second, floored at the lowest rate htb takes here (64 kbit/s).
    let rates: [Double]
    /// Resets: a window of `resetLength` seconds every `resetPeriod` seconds, the first at `resetPeriod`.
    let resetPeriod = 20.0
    let resetLength = 1.5

    /// `trace` from `start` seconds in, one rate a second: the mean of the trace over that second (the lab's
    /// reading of the same trace, `LinkLabRate.trace`, so this line and the link lab's replay the same capacity),
    /// for one whole cycle of the trace.
    init(_ trace: ThroughputTrace, startingAt start: Double) {
        let rate = LinkLabDirection(delay: 0, rate: .trace(trace, startingAt: start))
        let seconds = max(1, Int(trace.duration.rounded(.down)))
        self.init(
            name: trace.name + (start > 0 ? " from " + Measure.formatted(start, decimals: 1) + " s" : ""),
            rates: (0..<seconds).map { rate.capacityMegabits(from: Double($0), to: Double($0 + 1)) })
    }

    init(name: String, rates: [Double]) {
        self.name = name
        self.rates = rates.map { max($0, 0.064) }
    }

    /// The mean rate in Mbit/s.
    var meanMbit: Double { rates.reduce(0, +) / Double(rates.count) }

    /// The rate during second `second` (the trace repeats).
    func rate(at second: Int) -> Double { rates[second % rates.count] }

    /// Whether `time` seconds after the start falls in a reset window.
    func resetting(at time: Double) -> Bool {
        time >= resetPeriod && time.truncatingRemainder(dividingBy: resetPeriod) < resetLength
    }

    /// Seconds of second `second` outside the reset windows.
    func openShare(of second: Int) -> Double {
        let start = Double(second)
        let phase = start.truncatingRemainder(dividingBy: resetPeriod)
        guard start + 1 > resetPeriod else { return 1 }
        // A window [k*period, k*period + length) overlapping [start, start + 1).
        let windowStart = start - phase
        let overlap = max(0, min(start + 1, windowStart + resetLength) - max(start, windowStart))
        let next = windowStart + resetPeriod
        let nextOverlap = max(0, min(start + 1, next + resetLength) - max(start, next))
        return 1 - overlap - nextOverlap
    }

    /// The link's limit: the seconds the trace needs to carry `bytes`, with nothing carried during resets.
    func limit(bytes: Int64) -> Double {
        var left = Double(bytes)
        var second = 0
        while true {
            let capacity = rate(at: second) * 1e6 / 8 * openShare(of: second)
            if capacity >= left { return Double(second) + left / capacity }
            left -= capacity
            second += 1
        }
    }

    /// Drives `lab` from `start` (monotonic seconds) until cancelled: the rate of each second, the reset windows.
    func replay(on lab: LinkLab, from start: Double) async throws {
        var resetOn = false
        while !Task.isCancelled {
            let time = Measure.now() - start
            try lab.setRate(rate(at: Int(time)))
            let reset = resetting(at: time)
            if reset != resetOn {
                try lab.setResetting(reset)
                resetOn = reset
            }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        if resetOn { try lab.setResetting(false) }
    }
}
