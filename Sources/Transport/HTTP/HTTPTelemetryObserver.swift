import Synchronization

/// Collects the telemetry of every response the HTTP client receives inside a scope, whatever code sends the
/// requests: a caller that drives a backend (which may send several requests for one part: a `HEAD` to recover an
/// offset, then a `PATCH`) learns the protocol and connection reuse of each without the backend passing them on.
///
/// ```swift
/// let observer = HTTPTelemetryObserver()
/// let receipt = try await HTTPTelemetryObserver.$current.withValue(observer) {
///     try await backend.send(part, to: upload)
/// }
/// let last = observer.last  // the final request's protocol, timings and reuse
/// ```
package final class HTTPTelemetryObserver: Sendable {
    /// The observer of the current task, if a caller set one; child tasks inherit it.
    @TaskLocal package static var current: HTTPTelemetryObserver?

    private let state = Mutex<(count: Int, last: HTTPTelemetry?)>((0, nil))

    /// An observer that has seen nothing yet.
    package init() {}

    /// The telemetry of the most recent response seen, nil before the first.
    package var last: HTTPTelemetry? { state.withLock { $0.last } }

    /// How many responses were seen.
    package var count: Int { state.withLock { $0.count } }

    func record(_ telemetry: HTTPTelemetry) {
        state.withLock {
            $0.count += 1
            $0.last = telemetry
        }
    }
}
