import AetherIO
import AetherTransport

/// One request's attempt as the telemetry sees it: when it started, the HTTP client's observation of it (installed
/// as `HTTPTelemetryObserver.current` around the request), and the trace line written when it ends. A new
/// connection's handshake also gives the interruption log a round trip and the congestion control in use.
struct AttemptTrace: Sendable {
    let observer = HTTPTelemetryObserver()
    private let startedAtMs: Int64
    private let start: Double
    private let clock: any AetherClock

    /// An attempt starting now.
    init(clock: any AetherClock) {
        self.clock = clock
        startedAtMs = clock.wallMilliseconds()
        start = clock.monotonicSeconds()
    }

    /// The attempt ended with `outcome` (and `error`): it carried `length` bytes from `offset`, the first of its
    /// `requestParts` parts (nil: one part) being `index`, as attempt `attempt` of it.
    func ended(
        _ outcome: ChunkOutcome, _ error: TransportError?, index: Int, offset: Int64, length: Int64, attempt: Int,
        requestParts: Int? = nil, telemetry: TelemetryRecorder?, interruptions: InterruptionLog
    ) {
        let http = observer.last
        if let http, !http.connectionReused {
            interruptions.noteHandshake(seconds: http.connect / .seconds(1), congestionControl: http.congestionControl)
        }
        telemetry?.trace(
            ChunkTrace(
                uploadID: "", index: index, offset: offset, length: Int(length), attempt: attempt,
                startedAtMs: startedAtMs,
                durationMs: Int64(((clock.monotonicSeconds() - start) * 1000).rounded()), outcome: outcome,
                errorCode: error.map { "\($0.code)" }, transportProtocol: http.map { TransportProtocol(measured: $0) },
                connectionReused: http?.connectionReused, pathChanges: nil,
                rttMicroseconds: interruptions.roundTripTime.map { Int64($0 * 1e6) }, requestParts: requestParts,
                congestionControl: http?.congestionControl))
    }
}
