package import AetherIO

/// A reading of the session's `AetherClock`, in the units the session machines use: a monotonic instant for timers and the wall time for hello timestamps.
///
/// Both are milliseconds. The monotonic reading never goes back, so timers survive wall-clock jumps; the
/// wall reading (milliseconds since the Unix epoch) only feeds the hello timestamp and the host's window.
package struct SessionTime: Sendable, Hashable, CustomStringConvertible {
    /// Milliseconds on a monotonic clock (an arbitrary origin).
    package var monotonic: UInt64
    /// Milliseconds since 1970-01-01T00:00:00Z.
    package var wall: UInt64

    /// Wraps the two readings.
    package init(monotonic: UInt64, wall: UInt64) {
        self.monotonic = monotonic
        self.wall = wall
    }

    /// The two readings of `clock` in whole milliseconds. The wall reading is at least 1: a reading at or before
    /// the epoch is no timestamp a host would accept either way.
    package init(reading clock: any AetherClock) {
        monotonic = UInt64(clamping: max(0, clock.monotonicMilliseconds()))
        wall = UInt64(clamping: max(1, clock.wallMilliseconds()))
    }

    /// The same clock `milliseconds` later (both readings move together).
    package func advanced(by milliseconds: UInt64) -> SessionTime {
        SessionTime(monotonic: monotonic + milliseconds, wall: wall + milliseconds)
    }

    /// Both readings, for logs.
    package var description: String { "t=\(monotonic) ms (wall \(wall))" }
}
