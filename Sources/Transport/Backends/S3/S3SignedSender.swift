import AetherIO

/// Signs and sends S3 requests, retrying per S3's guidance (5xx, SlowDown, a lost connection or a timeout) while
/// the body can be sent again: one loop for the multipart backend and the object client.
struct S3SignedSender: Sendable {
    /// One request: where it goes, what it carries and how its payload is signed.
    struct Request {
        var operation: String
        var method: String
        /// The signed `host` (with the bucket under virtual-host addressing).
        var host: String
        /// The decoded path SigV4 encodes.
        var path: String
        var url: String
        var query: [(name: String, value: String)] = []
        var headers = HTTPHeaders()
        var body: HTTPRequestBody = .empty
        var payload: S3SigV4Signer.Payload
        /// False for a body that cannot be sent twice (a stream): then nothing is retried.
        var replayable = true
        var responseBodyLimit = 8 << 20
    }

    let signer: S3SigV4Signer
    let transport: S3Backend.Transport
    let clock: any AetherClock
    let retry: S3RetryPolicy
    let timeouts: HTTPTimeouts
    /// Returns false when cancelled.
    let sleep: @Sendable (Duration) async -> Bool
    /// Uniform in [0, 1): back-off jitter.
    let random: @Sendable () -> Double

    /// Sends `request` until it succeeds, fails for good or runs out of attempts; `validate` runs on a 2xx answer
    /// and may throw (a retryable code is then retried like a 5xx).
    func perform(
        _ request: Request, validate: (HTTPResponse) throws(TransportError) -> Void = { _ in }
    ) async throws(TransportError) -> HTTPResponse {
        var attempt = 1
        while true {
            let signature = try signer.sign(
                S3SigV4Signer.Request(
                    method: request.method, host: request.host, path: request.path, query: request.query,
                    headers: request.headers),
                payload: request.payload, at: clock.wallWholeSeconds())
            var sent = request.headers
            for field in signature.headers { sent.add(field.name, field.value) }
            let failure: TransportError
            do throws(TransportError) {
                let response = try await transport(
                    HTTPRequest(
                        method: request.method, url: request.url, headers: sent, body: request.body,
                        timeouts: timeouts, responseBodyLimit: request.responseBodyLimit))
                if (200..<300).contains(response.status) {
                    try validate(response)
                    return response
                }
                failure = S3ErrorMapping.error(
                    operation: request.operation, status: response.status, body: response.body)
            } catch {
                failure = error
            }
            let transient =
                S3ErrorMapping.isRetryable(failure.code)
                || failure.code == .connectionClosed || failure.code == .timedOut
            guard transient, request.replayable, attempt < retry.maximumAttempts else {
                if transient, attempt > 1 {
                    throw TransportError(failure.code, failure.message + " (after \(attempt) attempts)")
                }
                throw failure
            }
            guard await sleep(retry.delay(beforeRetry: attempt, unit: random())) else {
                throw TransportError(.cancelled, "S3 \(request.operation) was cancelled while backing off")
            }
            attempt += 1
        }
    }

    /// `Task.sleep`, false when cancelled.
    static let taskSleep: @Sendable (Duration) async -> Bool = { duration in
        do {
            try await Task.sleep(for: duration)
            return true
        } catch { return false }
    }
}
