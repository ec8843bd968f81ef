import AetherIO
import AetherTransport
import Synchronization

/// A small request document (native JSON, a possession response) collected up to `limit` bytes, then handed
/// to `handle`. A larger body is answered 413 without being kept.
final class DocumentBodySink: HTTPRequestSink, @unchecked Sendable {
    // @unchecked: the server calls a sink from one connection thread, one call at a time.
    private let limit: Int
    private let handle: @Sendable ([UInt8]) -> HTTPServerResponse
    private let problemHeaders: [(name: String, value: String)]
    private var bytes: [UInt8] = []
    private var overflowed = false

    init(
        limit: Int, problemHeaders: [(name: String, value: String)] = [],
        handle: @escaping @Sendable ([UInt8]) -> HTTPServerResponse
    ) {
        self.limit = limit
        self.problemHeaders = problemHeaders
        self.handle = handle
    }

    func receive(_ piece: UnsafeRawBufferPointer) {
        guard !overflowed else { return }
        guard bytes.count + piece.count <= limit else {
            overflowed = true
            bytes = []
            return
        }
        unsafe bytes.append(contentsOf: piece)
    }

    func finish() -> HTTPServerResponse {
        guard !overflowed else {
            return ProblemResponse.make(
                ReceiverError(.tooLarge, "the document is larger than \(limit) bytes"), headers: problemHeaders)
        }
        return handle(bytes)
    }

    func interrupted() {}
}

/// An IETF or tus append streamed into the engine's `AppendSink`; the first storage error is kept and answered
/// once the body ends (the rest of the body is read and dropped).
final class AppendBodySink: HTTPRequestSink, @unchecked Sendable {
    // @unchecked: the server calls a sink from one connection thread, one call at a time.
    private let sink: AppendSink
    private let context: ReceiverContext
    private let started = ContinuousClock.now
    private let respond: @Sendable (Result<AppendResult, ReceiverError>) -> HTTPServerResponse
    private var failure: ReceiverError?

    init(
        sink: AppendSink, context: ReceiverContext,
        respond: @escaping @Sendable (Result<AppendResult, ReceiverError>) -> HTTPServerResponse
    ) {
        self.sink = sink
        self.context = context
        self.respond = respond
    }

    func receive(_ piece: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        do {
            try unsafe sink.write(piece)
        } catch {
            failure = error
        }
    }

    func finish() -> HTTPServerResponse {
        if let failure {
            if failure.code == .lengthMismatch || failure.code == .tooLarge { context.metrics.verifyFailed() }
            return respond(.failure(failure))
        }
        let written = sink.bytesWritten
        do {
            let result = try sink.finish()
            context.metrics.bytesReceived(written)
            context.metrics.chunkLatency(seconds: Self.seconds(since: started))
            return respond(.success(result))
        } catch {
            if error.code == .digestMismatch || error.code == .lengthMismatch { context.metrics.verifyFailed() }
            return respond(.failure(error))
        }
    }

    func interrupted() {
        guard failure == nil else { return }
        // Keeps what arrived (the client resumes from the stored offset); a storage error here leaves the
        // previous offset, which is also a state the client can resume from.
        _ = try? sink.interrupted()
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// A native chunk or parity shard: the body as sent is hashed for `Content-Digest`, decoded while streaming when
/// it carries a content coding (never past the declared length), and the decoded bytes go to the engine's
/// `ChunkSink`, which checks length, SHA-256 and CRC32C before anything is recorded.
final class ChunkBodySink: HTTPRequestSink, @unchecked Sendable {
    // @unchecked: the server calls a sink from one connection thread, one call at a time.
    /// Dropped (which discards its staged bytes) as soon as the request fails, before the answer is sent.
    private var sink: ChunkSink?
    private let context: ReceiverContext
    private let decoder: ContentDecoder?
    private let contentDigest: Digest32?
    private let chunk: Int?
    private let started = ContinuousClock.now
    private let respond: @Sendable (ChunkOutcome) -> HTTPServerResponse
    private var hasher = SHA256()
    /// Whether the body is hashed here for `Content-Digest`. Not when it is sent uncoded with the same digest as
    /// `Aether-Chunk`'s `sha-256`: the `ChunkSink` checks those very bytes against that digest (one pass).
    private let hashesBody: Bool
    private var received: Int64 = 0
    private var failure: ReceiverError?

    init(
        sink: ChunkSink, context: ReceiverContext, decoder: ContentDecoder?, contentDigest: Digest32?, chunk: Int?,
        respond: @escaping @Sendable (ChunkOutcome) -> HTTPServerResponse
    ) {
        self.sink = sink
        self.context = context
        self.decoder = decoder
        self.contentDigest = contentDigest
        self.chunk = chunk
        self.respond = respond
        hashesBody = contentDigest != nil && (decoder != nil || contentDigest != sink.declaredSHA256)
    }

    func receive(_ piece: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        received += Int64(piece.count)
        if hashesBody { unsafe hasher.update(piece) }
        do throws(ReceiverError) {
            if let decoder {
                let decoded: [UInt8]
                do throws(AetherProtocolError) {
                    decoded = try unsafe decoder.update(piece)
                } catch {
                    throw Self.decodingError(error, chunk: chunk)
                }
                if !decoded.isEmpty { try sink?.write(decoded) }
            } else {
                try unsafe sink?.write(piece)
            }
        } catch {
            failure = error
            sink = nil
        }
    }

    func finish() -> HTTPServerResponse {
        if failure == nil, let decoder {
            do throws(AetherProtocolError) {
                try decoder.finish()
            } catch {
                failure = Self.decodingError(error, chunk: chunk)
            }
        }
        if failure == nil, hashesBody, let contentDigest, hasher.finalize() != contentDigest {
            failure = ReceiverError(
                .digestMismatch, "the body does not match its Content-Digest", chunk: chunk)
        }
        guard failure == nil, let sink else {
            sink = nil
            let failure = failure ?? ReceiverError(.malformedRequest, "this chunk request has already ended")
            if [.digestMismatch, .lengthMismatch, .tooLarge].contains(failure.code) { context.metrics.verifyFailed() }
            return ProblemResponse.make(failure, headers: NativeHandler.protocolHeaders)
        }
        self.sink = nil
        do {
            let outcome = try sink.finish()
            context.metrics.bytesReceived(received)
            context.metrics.chunkLatency(seconds: AppendBodySink.seconds(since: started))
            return respond(outcome)
        } catch {
            if [.digestMismatch, .lengthMismatch].contains(error.code) { context.metrics.verifyFailed() }
            return ProblemResponse.make(error, headers: NativeHandler.protocolHeaders)
        }
    }

    /// The body was cut: the chunk keeps its received prefix (decoded bytes) as a partial where the store allows it.
    func interrupted() {
        if sink?.interrupted() == true { context.metrics.partialKept() }
        sink = nil
    }

    private static func decodingError(_ error: AetherProtocolError, chunk: Int?) -> ReceiverError {
        if error.code == .decodedTooLarge {
            return ReceiverError(.tooLarge, "the decoded body is longer than the chunk's length", chunk: chunk)
        }
        return ReceiverError(.malformedRequest, "the body is not valid for its Content-Encoding", chunk: chunk)
    }
}
