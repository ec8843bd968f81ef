/// Where the key ring's owner reads the time; injected so tests use a manual clock.
public protocol KeyClock: Sendable {
    /// The current wall-clock time.
    func now() -> KeyTimestamp
}

/// The system's real-time clock (`clock_gettime(CLOCK_REALTIME)`).
public struct SystemKeyClock: KeyClock {
    /// A handle on the system clock; it holds no state.
    public init() {}

    /// The current wall-clock time.
    public func now() -> KeyTimestamp { KeyTimestamp(millisecondsSinceEpoch: Posix.realTimeMilliseconds()) }
}
