import AetherIO

/// What every handler needs: the engine, the counters, the clock, and the owner of the request.
struct ReceiverContext: Sendable {
    /// The storage and verification engine.
    let engine: UploadEngine
    /// The counters behind `/metrics`.
    let metrics: ReceiverMetrics
    /// Wall time for `Upload-Expires` and `max-age`.
    let clock: any AetherClock

    /// Seconds until `expiresAt`, never negative.
    func secondsLeft(_ expiresAt: Int64?) -> Int64? {
        expiresAt.map { max(0, $0 - clock.wallWholeSeconds()) }
    }
}
