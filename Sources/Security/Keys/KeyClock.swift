/// Where the key ring's owner reads the time; injected so tests use a manual clock.
public protocol KeyClock: Sendable {
    /// The current wall-clock time.
    func now() -> KeyTimestamp
}
