public import AetherTransport

/// Sends a request again while its connection is reset or refused (a receiver restarting, a link dropping), for a
/// bounded time, with back-off from 0.1 s doubling to 2 s; any other failure, or running out of time, is thrown
/// as it came. For the requests outside the upload's retry loop: the resume query, the protocol probe.
public struct PathFailureWait: Sendable {
    /// Seconds a reset connection is waited out.
    public var resetLimit: Double
    /// Seconds a refused connection is waited out.
    public var refusedLimit: Double

    /// Waits out resets for `resetLimit` and refusals for `refusedLimit` seconds (the latter `resetLimit` when nil).
    public init(resetLimit: Double, refusedLimit: Double? = nil) {
        self.resetLimit = resetLimit
        self.refusedLimit = refusedLimit ?? resetLimit
    }

    /// The result of `operation`, sent again while the path fails and time is left; `waiting` hears the first
    /// failure that is waited out, with the seconds it may be waited out for.
    public func run<T>(
        waiting: (TransportError, Double) -> Void = { _, _ in }, _ operation: () async throws(TransportError) -> T
    ) async throws(TransportError) -> T {
        var told = false
        let started = ContinuousClock.now
        var delay = 0.1
        while true {
            do {
                return try await operation()
            } catch {
                let limit =
                    switch error.code {
                    case .connectionClosed: resetLimit
                    case .connectionRefused: refusedLimit
                    default: -1.0
                    }
                guard started.duration(to: .now) / .seconds(1) + delay <= limit else { throw error }
                if !told {
                    told = true
                    waiting(error, limit)
                }
                do {
                    try await Task.sleep(for: .milliseconds(Int64(delay * 1000)))
                } catch {
                    throw TransportError(.cancelled, "cancelled while waiting for the destination")
                }
                delay = min(delay * 2, 2)
            }
        }
    }
}
