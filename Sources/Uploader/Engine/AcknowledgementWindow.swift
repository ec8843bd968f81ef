/// The link's rate as the acknowledgements show it: each acknowledged request is measured as every byte acknowledged
/// over its own send time, on any stream (`sample`).
///
/// Why not the time since the previous acknowledgement: that stands for this request's share of the link only when
/// the acknowledgements of the streams are evenly spread. Requests sent side by side end close together, and on the
/// link lab (the Ghent tram trace, 80 ms RTT, 8 Mbit/s then) a 4 MiB run acknowledged 0.17 s after a 1 MiB request
/// was a 197 Mbit/s sample: one decision of 8 streams x 11 MiB put 55 MiB in flight before the first reset. Bounding
/// that gap from below by the request's time over the streams in flight removed the spikes but biased every sample
/// low (short gaps were raised, long ones kept), and the scheduler stayed at 1 MiB requests on a 15-20 Mbit/s link.
/// Over a window the bytes of all streams count once each: with n staggered streams the window of one request holds
/// about n requests' bytes (the link's rate); requests that end together count together, never over a few
/// milliseconds; an idle gap before a request is outside its window.
struct AcknowledgementWindow: Sendable {
    /// Acknowledgements kept: the longest request time the link planner considers, and a bound on the entries.
    static let horizon = 300.0
    static let capacity = 4096

    private var entries: [(time: Double, bytes: Int64)] = []

    /// Records `bytes` acknowledged at `time` (monotonic seconds, not decreasing).
    mutating func record(bytes: Int64, at time: Double) {
        entries.append((time, bytes))
        let old = entries.prefix { $0.time < time - Self.horizon }.count
        let excess = max(0, entries.count - old - Self.capacity)
        if old + excess > 0 { entries.removeFirst(old + excess) }
    }

    /// The bytes acknowledged in `(now - window, now]` and the window's seconds: the link's rate over the last
    /// `window` seconds (a request's send time), nothing when the window is empty or not positive.
    func sample(now: Double, window: Double) -> (bytes: Int64, seconds: Double) {
        guard window > 0, window.isFinite else { return (0, 0) }
        var bytes: Int64 = 0
        for entry in entries.reversed() {
            guard entry.time > now - window else { break }
            if entry.time <= now { bytes += entry.bytes }
        }
        return (bytes, bytes > 0 ? window : 0)
    }
}
