/// How long an append refused with 409 at the server's own offset is waited for: such a server still holds an
/// earlier append to the same upload (most often this client's own, on a connection that stalled without closing,
/// as a phone changing network leaves it), until it ends it itself (the aether receiver after 60 s, others after
/// their request timeout). The next append is sent again after each delay, 0, 0.5, 1, 2, 4 then 8 s at most, until
/// `limit` seconds have been waited; then the wait is over.
struct HeldAppendWait {
    let limit: Double
    private(set) var waited = 0.0
    private(set) var refusals = 0

    init(limit: Duration) { self.limit = HTTPTimeouts.interval(limit) }

    /// The delay before the next append, or nil once `limit` is used up.
    mutating func next() -> Double? {
        refusals += 1
        let delay = refusals == 1 ? 0 : min(8, 0.5 * Double(1 << min(refusals - 2, 8)))
        guard waited + delay <= limit else { return nil }
        waited += delay
        return delay
    }

    /// Sleeps `seconds`; a cancelled task is `.cancelled`.
    static func sleep(_ seconds: Double) async throws(TransportError) {
        guard seconds > 0 else { return }
        do {
            try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up))))
        } catch {
            throw TransportError(.cancelled, "the upload was cancelled while it waited for the server")
        }
    }
}
