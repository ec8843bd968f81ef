/// A reading of the session clock: a monotonic instant for timers and the wall time for hello timestamps.
///
/// Both are milliseconds. The monotonic reading never goes back, so timers survive wall-clock jumps; the
/// wall reading (milliseconds since the Unix epoch) only feeds the hello timestamp and the host's window.
public struct SessionTime: Sendable, Hashable, CustomStringConvertible {
    /// Milliseconds on a monotonic clock (an arbitrary origin).
    public var monotonic: UInt64
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var wall: UInt64

    /// Wraps the two readings.
    public init(monotonic: UInt64, wall: UInt64) {
        self.monotonic = monotonic
        self.wall = wall
    }

    /// The same clock `milliseconds` later (both readings move together).
    public func advanced(by milliseconds: UInt64) -> SessionTime {
        SessionTime(monotonic: monotonic + milliseconds, wall: wall + milliseconds)
    }

    public var description: String { "t=\(monotonic) ms (wall \(wall))" }
}

/// Where the session state machines' drivers read the time; injected so tests use a manual clock.
public protocol SessionClock: Sendable {
    /// The current reading.
    func now() -> SessionTime
}

/// The system clocks: `CLOCK_MONOTONIC` and `CLOCK_REALTIME`.
public struct SystemSessionClock: SessionClock {
    /// Added to the wall reading (tests give a host a skewed clock); zero in production.
    public let wallSkewMilliseconds: Int64

    /// A handle on the system clocks, with an optional wall-clock skew.
    public init(wallSkewMilliseconds: Int64 = 0) { self.wallSkewMilliseconds = wallSkewMilliseconds }

    /// The current reading.
    public func now() -> SessionTime {
        let wall = Int64(clamping: UDPSocket.realTimeMilliseconds()) + wallSkewMilliseconds
        return SessionTime(monotonic: UDPSocket.monotonicMilliseconds(), wall: UInt64(clamping: max(1, wall)))
    }
}
