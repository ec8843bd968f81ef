/// Where the session state machines' drivers read the time; injected so tests use a manual clock.
public protocol SessionClock: Sendable {
    /// The current reading.
    func now() -> SessionTime
}
