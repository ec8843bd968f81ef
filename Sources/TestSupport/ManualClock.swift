public import AetherIO
import Synchronization

/// A clock that moves only when told to, for tests and trace replays. Thread-safe.
///
/// `advance(by:)` moves both readings together, as real time does; `setWall(_:)` makes the wall clock jump (either
/// way) without touching the monotonic one, as setting the system time does.
public final class ManualClock: AetherClock {
    private struct Readings {
        var wall: Int64
        var monotonic: Int64
    }

    private let readings: Mutex<Readings>

    /// The default wall reading of a new manual clock: 2023-11-14 22:13:20 UTC (1.7e9 seconds since the epoch).
    public static let defaultWall: Duration = .seconds(1_700_000_000)

    /// A clock reading `wall` since the Unix epoch and `monotonic` since its origin.
    public init(wall: Duration = ManualClock.defaultWall, monotonic: Duration = .zero) {
        readings = Mutex(
            Readings(wall: AetherTime.nanoseconds(wall), monotonic: max(0, AetherTime.nanoseconds(monotonic))))
    }

    /// The wall reading.
    public func wallNanoseconds() -> Int64 { readings.withLock { $0.wall } }

    /// The monotonic reading.
    public func monotonicNanoseconds() -> Int64 { readings.withLock { $0.monotonic } }

    /// Moves both readings forward by `delta`; a negative `delta` is ignored (time does not run backwards).
    public func advance(by delta: Duration) {
        let step = AetherTime.nanoseconds(delta)
        guard step > 0 else { return }
        readings.withLock {
            $0.wall = $0.wall.addingReportingOverflow(step).partialValue
            $0.monotonic = $0.monotonic.addingReportingOverflow(step).partialValue
        }
    }

    /// Sets the wall reading to `wall` since the Unix epoch (a jump either way); the monotonic reading stays.
    public func setWall(_ wall: Duration) {
        let value = AetherTime.nanoseconds(wall)
        readings.withLock { $0.wall = value }
    }
}
