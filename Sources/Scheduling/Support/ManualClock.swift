import Synchronization

/// A clock that moves only when told to: for tests and for trace replays.
public final class ManualClock: MonotonicClock {
    private let seconds: Mutex<Double>

    /// Creates a clock reading `start` seconds.
    public init(start: Double = 0) { seconds = Mutex(start) }

    /// The current reading.
    public func now() -> Double { seconds.withLock { $0 } }

    /// Moves the clock forward by `delta` seconds (negative values are ignored: the clock is monotonic).
    public func advance(by delta: Double) {
        seconds.withLock { $0 += max(0, delta) }
    }
}
