import Foundation

/// A source of time in milliseconds, injected so that validators and timers can be tested with a
/// manual clock instead of sleeps.
public protocol IntegrityClock: Sendable {
    /// Milliseconds on this clock's scale (Unix time for a wall clock, any origin for a monotonic one).
    func nowMilliseconds() -> Int64
}

/// Unix time in milliseconds (the scale of message timestamps checked by `ChunkIntegrityValidator`).
public struct SystemWallClock: IntegrityClock {
    /// The system's real-time clock.
    public init() {}

    /// Milliseconds since 1970-01-01 UTC.
    public func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// A monotonic clock in milliseconds since this value was made (for timeouts: it never jumps back).
public struct SystemMonotonicClock: IntegrityClock {
    private let origin: ContinuousClock.Instant

    /// Starts counting from now.
    public init() { origin = ContinuousClock.now }

    /// Milliseconds since `init`.
    public func nowMilliseconds() -> Int64 {
        let elapsed = origin.duration(to: ContinuousClock.now).components
        return elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
    }
}
