public import AetherIO
import Synchronization

/// Spaces the parts of an upload so that, on average, at most `bytesPerSecond` leave (`aether upload
/// --max-rate`): every part reserves its bytes on one timeline shared by the parts in flight, and waits for
/// its slot before it is sent. The first part goes at once; a part never waits longer than its predecessors'
/// bytes take at the rate.
public final class RatePacer: Sendable {
    /// The cap in bytes per second.
    public let bytesPerSecond: Int64
    private let clock: any AetherClock
    // Monotonic seconds from which the next reservation's bytes may leave.
    private let nextFree = Mutex<Double?>(nil)

    /// A pacer at `bytesPerSecond` (at least 1) on `clock`.
    public init(bytesPerSecond: Int64, clock: any AetherClock = SystemClock()) throws(UploaderError) {
        guard bytesPerSecond >= 1 else {
            throw UploaderError(.invalidArgument, "the rate cap must be at least 1 byte per second")
        }
        self.bytesPerSecond = bytesPerSecond
        self.clock = clock
    }

    /// Reserves `bytes` at monotonic time `now`; returns how many seconds to wait before sending them.
    public func reserve(_ bytes: Int64, now: Double) -> Double {
        let duration = Double(max(bytes, 0)) / Double(bytesPerSecond)
        return nextFree.withLock { next in
            let start = max(next ?? now, now)
            next = start + duration
            return start - now
        }
    }

    /// Waits for the slot of `bytes` (cancellation ends the wait with `CancellationError`).
    public func admit(_ bytes: Int64) async throws {
        let wait = reserve(bytes, now: clock.monotonicSeconds())
        if wait > 0 { try await Task.sleep(for: .milliseconds(Int64((wait * 1000).rounded(.up)))) }
    }
}
