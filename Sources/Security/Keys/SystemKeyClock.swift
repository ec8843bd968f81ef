/// The system's real-time clock (`clock_gettime(CLOCK_REALTIME)`).
public struct SystemKeyClock: KeyClock {
    /// A handle on the system clock; it holds no state.
    public init() {}

    /// The current wall-clock time.
    public func now() -> KeyTimestamp { KeyTimestamp(millisecondsSinceEpoch: KeyStorePosix.realTimeMilliseconds()) }
}
