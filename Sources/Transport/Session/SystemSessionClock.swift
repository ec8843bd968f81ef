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
