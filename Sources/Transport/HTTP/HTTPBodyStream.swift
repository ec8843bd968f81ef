public import AetherIO
import Synchronization

/// A request body written while it is being sent: a bounded queue of the IO layer's chunks (or byte arrays)
/// between the writing task and the client's thread. libcurl pauses the transfer when the queue is empty and
/// resumes it on the next write, so a slow reader never stalls other transfers; a writer waits while the queue
/// is full. The bytes are not copied on the way in.
///
/// Write all the bytes, then call `finish()`. With a declared `length`, a short or long stream fails the request
/// with `.bodySourceFailed`. Once the request has ended, writes throw.
public final class HTTPBodyStream: Sendable {
    /// The declared length (sent as `Content-Length`), or nil for chunked / end-of-stream framing.
    public let length: Int64?
    private let state: Mutex<HTTPBodyStreamStateMachine>

    /// A stream of `length` bytes (nil: unknown) holding at most `capacity` pieces ahead of the sender.
    public init(length: Int64?, capacity: Int = 4) {
        self.length = length
        state = Mutex(HTTPBodyStreamStateMachine(length: length, capacity: capacity))
    }

    /// Appends a chunk; waits while the queue is full. The chunk's buffer returns to its pool once sent.
    public func write(_ chunk: Chunk) async throws(TransportError) {
        try await write(piece: .chunk(chunk))
    }

    /// Appends bytes; waits while the queue is full.
    public func write(_ bytes: [UInt8]) async throws(TransportError) {
        try await write(piece: .bytes(bytes))
    }

    /// Marks the end of the body.
    public func finish() {
        let wake = state.withLock { $0.finish() }
        wake?()
    }

    /// Gives up: the request fails with `.bodySourceFailed` and `reason`.
    public func abort(reason: String) {
        let wake = state.withLock { $0.abort(reason) }
        wake?()
    }

    private func write(piece: HTTPBodyPiece) async throws(TransportError) {
        let accepted: Result<Void, TransportError> = await withCheckedContinuation { continuation in
            let resume: @Sendable (Bool) -> Void = { accepted in
                continuation.resume(
                    returning: accepted
                        ? .success(()) : .failure(TransportError(.cancelled, "the request this body belongs to ended")))
            }
            let action = state.withLock { $0.write(piece, resume: resume) }
            switch action {
            case .queued(let wake):
                wake?()
                continuation.resume(returning: .success(()))
            case .parked: break
            case .refused(let error): continuation.resume(returning: .failure(error))
            }
        }
        try accepted.get()
    }

    // MARK: The client's side (its thread)

    func attach(wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.attach(wake: wake) }
    }

    func next() -> HTTPBodyStreamStateMachine.NextAction {
        let action = state.withLock { $0.next() }
        if case .piece(_, let resume?) = action { resume(true) }
        return action
    }

    func close() {
        let writers = state.withLock { $0.close() }
        for resume in writers { resume(false) }
    }
}
