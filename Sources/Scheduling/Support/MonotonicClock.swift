/// A source of monotonic time in seconds, injected into every timed state machine so tests use a manual clock.
public protocol MonotonicClock: Sendable {
    /// Seconds since an arbitrary fixed origin; never decreases.
    func now() -> Double
}
