import AetherIO
import AetherScheduling
import AetherTransport
import Synchronization

/// The one retry policy of an upload's requests, shared by `ChunkedUploader`, `FollowedUploader` and `UploadJob`
/// and by every backend behind them (a backend sends each request once: the S3 backend a detection builds too):
/// which failures are sent again (`isRetryable`), which are the path's rather than the destination's
/// (`isPathFailure`: waited out for `connectionWaitLimit` without counting as attempts), the backoff with jitter,
/// the circuit breaker around the destination, and what the failures said about the link (the interruptions the
/// link planner forecasts, the answered failures the parity decision reads). The parts, the creation, the
/// completion and the spot checks go through `withRetries`; the questions asked before the upload runs (the
/// protocol probe, the resume and chain queries) through `query`, which uses the same rules but leaves what a
/// failure means to its caller.
final class RetryPolicy: Sendable {
    /// A resource each attempt holds while it runs (the link planner's stream gate): acquired before the attempt,
    /// released when it ends, either way.
    struct Slot: Sendable {
        let acquire: @Sendable () async throws -> Void
        let release: @Sendable () -> Void
    }

    let configuration: UploadConfiguration
    private let breaker: UploadCircuitBreaker
    /// Resets, refusals and timeouts seen by the requests: the scheduler keeps requests short of them.
    let interruptions = InterruptionLog()
    /// Failed attempts that were the destination's answer or a damaged transfer, not an interruption of the path:
    /// the loss the parity decision reads. A reset, refusal or timeout fails every request in flight at once and
    /// its retry resends them; a parity shard repairs none of that and only adds bytes (`docs/UPLOADER.md`).
    let answeredFailures = Atomic<Int>(0)
    /// Wakes requests waiting out a reset or refused connection once another request gets through.
    let pathRecovery = PathRecovery()

    /// A policy with `configuration`'s attempts, backoff and waits, around `breaker`.
    init(configuration: UploadConfiguration, breaker: UploadCircuitBreaker = UploadCircuitBreaker()) {
        self.configuration = configuration
        self.breaker = breaker
    }

    /// Runs `operation` through the circuit breaker, retrying retryable `TransportError`s with backoff.
    /// Returns the result and how many times the operation was sent. A reset or refused connection is retried
    /// for up to `connectionWaitLimit` seconds without counting as an attempt or opening the breaker.
    /// With `slot`, each attempt first acquires it and gives it back when the attempt ends.
    func withRetries<T: Sendable>(
        index: Int, slot: Slot? = nil, emit: @Sendable (UploadEvent) -> Void,
        _ operation: @Sendable () async throws(TransportError) -> T
    ) async throws -> (T, Int) {
        var attempt = 1
        var sends = 0
        var pathFailures = 0
        var pathFailingSince: ContinuousClock.Instant?
        var waitedForBreaker = 0.0
        // The first attempt that timed out (a stalled connection): a later refusal may be the destination still
        // holding that request, which the final message then says.
        var firstTimeout: (attempt: Int, error: TransportError)?
        while true {
            try Task.checkCancellation()
            switch breaker.permission() {
            case .allowed, .probe: break
            case .refused(let retryAfter):
                waitedForBreaker += retryAfter
                guard waitedForBreaker <= configuration.circuitWaitLimit else {
                    throw UploaderError(
                        .circuitOpen,
                        "the destination kept failing and the circuit breaker stayed open; try again later")
                }
                try await Self.sleep(seconds: max(retryAfter, 0.01))
                continue
            }
            if let slot { try await slot.acquire() }
            do throws(TransportError) {
                sends += 1
                let result: T
                do throws(TransportError) {
                    result = try await operation()
                } catch {
                    slot?.release()
                    throw error
                }
                slot?.release()
                breaker.recordSuccess()
                pathRecovery.noteSuccess()
                return (result, sends)
            } catch {
                if error.code == .cancelled || Task.isCancelled { throw CancellationError() }
                let recoveries = pathRecovery.mark
                interruptions.note(error.code)
                if !InterruptionLog.interrupts(error.code) { answeredFailures.add(1, ordering: .relaxed) }
                let what = index >= 0 ? "part \(index)" : "the request"
                let pathFailure = Self.isPathFailure(error.code)
                let base: Double
                if pathFailure {
                    // Real time, as the sleeps between attempts are (an injected clock may stand still).
                    let since = pathFailingSince ?? .now
                    pathFailingSince = since
                    let failing = since.duration(to: .now) / .seconds(1)
                    guard failing <= configuration.connectionWaitLimit else {
                        throw UploaderError(
                            .transportFailed,
                            "\(what) could not reach the destination for \(Int(failing)) s: \(error.message) "
                                + "(\(error.code))")
                    }
                    pathFailures += 1
                    base = pathBackoff(pathFailures)
                } else if error.code == .receiptMismatch {
                    // The destination says it stored other bytes than this file's: final, and exit 4, not a
                    // transport failure to retry.
                    throw UploaderError(
                        .verificationFailed,
                        "the destination's receipt does not match the file\(index >= 0 ? " at part \(index)" : ""): "
                            + error.message)
                } else {
                    breaker.recordFailure()
                    if error.code == .timedOut, firstTimeout == nil { firstTimeout = (sends, error) }
                    guard Self.isRetryable(error.code), attempt < configuration.maximumAttempts else {
                        var note = ""
                        if let firstTimeout, error.code != .timedOut {
                            note =
                                "; attempt \(firstTimeout.attempt) timed out first (\(firstTimeout.error.message)), and "
                                + "the destination may still hold that request"
                        }
                        throw UploaderError(
                            .transportFailed,
                            "\(what) failed after \(attempt) attempt(s): \(error.message) (\(error.code))\(note)",
                            errno: error.errno)
                    }
                    attempt += 1
                    base = answerBackoff(attempt)
                }
                let delay = Self.jittered(base)
                emit(.retry(RetryReport(index: index, attempt: sends + 1, cause: error, delay: delay)))
                if pathFailure {
                    try await pathRecovery.sleep(seconds: delay, since: recoveries)
                } else {
                    try await Self.sleep(seconds: delay)
                }
            }
        }
    }

    /// Sends `operation`, a question asked outside the upload's requests (the protocol probe, the resume and chain
    /// queries), under the same rules without the circuit breaker: a reset connection is waited out for
    /// `resetLimit` seconds (the configuration's `connectionWaitLimit` when nil) and a refused one for
    /// `refusedLimit` (`resetLimit` when nil), sleeping the path backoff or until another request gets through; a
    /// retryable answer is asked up to `attempts` times (the configuration's `maximumAttempts` when nil) with the
    /// answer backoff. Anything else, or
    /// running out of time or attempts, is thrown as it came, for the caller to judge; `waiting` hears the first
    /// path failure waited out, with its limit. Cancelled, it throws `.cancelled`.
    func query<T>(
        resetLimit: Double? = nil, refusedLimit: Double? = nil, attempts: Int? = nil,
        waiting: (TransportError, Double) -> Void = { _, _ in },
        _ operation: () async throws(TransportError) -> T
    ) async throws(TransportError) -> T {
        let started = ContinuousClock.now
        var attempt = 1
        var pathFailures = 0
        var told = false
        while true {
            let recoveries = pathRecovery.mark
            let failure: TransportError
            do {
                let result = try await operation()
                pathRecovery.noteSuccess()
                return result
            } catch {
                failure = error
            }
            if failure.code == .cancelled || Task.isCancelled {
                throw TransportError(.cancelled, "cancelled while waiting for the destination")
            }
            do {
                if Self.isPathFailure(failure.code) {
                    let resets = resetLimit ?? configuration.connectionWaitLimit
                    let limit = failure.code == .connectionRefused ? refusedLimit ?? resets : resets
                    pathFailures += 1
                    let delay = Self.jittered(pathBackoff(pathFailures))
                    guard started.duration(to: .now) / .seconds(1) + delay <= limit else { throw failure }
                    if !told {
                        told = true
                        waiting(failure, limit)
                    }
                    try await pathRecovery.sleep(seconds: delay, since: recoveries)
                } else {
                    guard Self.isRetryable(failure.code), attempt < attempts ?? configuration.maximumAttempts else {
                        throw failure
                    }
                    attempt += 1
                    try await Self.sleep(seconds: Self.jittered(answerBackoff(attempt)))
                }
            } catch let error as TransportError {
                throw error
            } catch {
                throw TransportError(.cancelled, "cancelled while waiting for the destination")
            }
        }
    }

    /// The backoff before the next try after `failures` reset or refused connections in a row: from
    /// `initialBackoff`, doubling, up to `connectionBackoffLimit` (the part goes out soon after the path is back).
    private func pathBackoff(_ failures: Int) -> Double {
        min(configuration.connectionBackoffLimit, configuration.initialBackoff * Double(1 << min(failures - 1, 20)))
    }

    /// The backoff before attempt `attempt` (2 or more) after answered failures: from `initialBackoff`, doubling, up
    /// to `maximumBackoff`.
    private func answerBackoff(_ attempt: Int) -> Double {
        min(configuration.maximumBackoff, configuration.initialBackoff * Double(1 << min(attempt - 2, 20)))
    }

    /// `base` with jitter: half of it fixed, half uniform, so streams failed together do not come back together.
    private static func jittered(_ base: Double) -> Double {
        base / 2 + Double(SecureRandom.uniform(1000)) / 1000 * base / 2
    }

    /// Failures of the path rather than of the destination's answer: the connection was reset or refused.
    static func isPathFailure(_ code: TransportError.Code) -> Bool {
        code == .connectionClosed || code == .connectionRefused
    }

    static func sleep(seconds: Double) async throws {
        guard seconds > 0 else { return }
        try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up))))
    }

    /// Failures worth sending again: the network or the server had a moment, or the destination caught bytes
    /// damaged in transit and refused them (`.checksumMismatch`). A receipt that disagrees with the client's own
    /// computation (`.receiptMismatch`) is never among them.
    static func isRetryable(_ code: TransportError.Code) -> Bool {
        [.timedOut, .connectionClosed, .connectionRefused, .notConnected, .serverFailed, .throttled, .checksumMismatch]
            .contains(code)
    }
}
