public import AetherIO
import Synchronization

/// The circuit breaker around chunk uploads: a `CircuitBreakerStateMachine` behind a lock, timed by an injected clock.
public final class UploadCircuitBreaker: Sendable {
    private let machine: Mutex<CircuitBreakerStateMachine>
    private let clock: any AetherClock

    /// Creates a closed breaker.
    public init(
        configuration: CircuitBreakerStateMachine.Configuration = .init(),
        clock: any AetherClock = SystemClock()
    ) {
        machine = Mutex(CircuitBreakerStateMachine(configuration: configuration))
        self.clock = clock
    }

    /// Whether a chunk may be sent now (`.probe`: it is the half-open probe).
    public func permission() -> CircuitBreakerStateMachine.Permission {
        let now = clock.monotonicSeconds()
        return machine.withLock { $0.permission(at: now) }
    }

    /// Throws `circuitOpen` when no chunk may be sent now; returns whether this one is the probe.
    public func acquire() throws(SchedulingError) -> Bool {
        switch permission() {
        case .allowed: return false
        case .probe: return true
        case .refused(let retryAfter):
            throw SchedulingError(.circuitOpen, "circuit breaker open; retry in \(Int(retryAfter.rounded(.up))) s")
        }
    }

    /// Records a chunk's success.
    public func recordSuccess() {
        let now = clock.monotonicSeconds()
        machine.withLock { $0.recordSuccess(at: now) }
    }

    /// Records a chunk's failure.
    public func recordFailure() {
        let now = clock.monotonicSeconds()
        machine.withLock { $0.recordFailure(at: now) }
    }

    /// Records an HTTP/2 stream reset.
    public func recordStreamReset() {
        let now = clock.monotonicSeconds()
        machine.withLock { $0.recordStreamReset(at: now) }
    }

    /// The current state.
    public var state: CircuitBreakerStateMachine.State { machine.withLock { $0.state } }
}
