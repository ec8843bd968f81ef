import AetherIO
import AetherTransport

/// A native run (`docs/PROTOCOL.md` section 3.2.1): consecutive chunks in one body. Each chunk's bytes go to the
/// engine's `ChunkSink` as they arrive (the sink stages them in the blob store, so no chunk is held in memory), and the
/// chunk is verified, made durable and committed as soon as its last byte is in: a run cut short keeps every chunk
/// finished before the cut, and the chunk under way keeps its received prefix where the store allows it (section 3.2.2).
/// The first failure stops the run; the answer names the chunks stored before it.
final class RunBodySink: HTTPRequestSink, @unchecked Sendable {
    // @unchecked: the server calls a sink from one connection thread, one call at a time.
    private let engine: UploadEngine
    private let context: ReceiverContext
    private let id: UploadID
    private let owner: ClientIdentity
    private let first: Int
    private let header: AetherRunHeader
    private let lengths: [Int]
    private var position = 0
    private var current: ChunkSink?
    private var written = 0
    private var stored: [Digest32] = []
    private var storedNow = false
    private var received: Int64 = 0
    private var failure: ReceiverError?
    private let started = ContinuousClock.now

    /// A run sink; `continuing` is the first chunk's sink of a continuation (section 3.2.2), opened before the body,
    /// whose first `from` bytes the receiver holds already.
    init(
        context: ReceiverContext, id: UploadID, owner: ClientIdentity, first: Int, header: AetherRunHeader,
        lengths: [Int], continuing: ChunkSink? = nil, from: Int = 0
    ) {
        self.engine = context.engine
        self.context = context
        self.id = id
        self.owner = owner
        self.first = first
        self.header = header
        self.lengths = lengths
        current = continuing
        written = continuing == nil ? 0 : from
    }

    func receive(_ piece: UnsafeRawBufferPointer) {
        received += Int64(piece.count)
        var offset = 0
        while failure == nil, offset < piece.count {
            guard position < lengths.count else {
                fail(ReceiverError(.tooLarge, "the body is longer than the run's chunks", chunk: first + position))
                return
            }
            do throws(ReceiverError) {
                let sink = try open()
                let take = min(piece.count - offset, lengths[position] - written)
                try unsafe sink.write(UnsafeRawBufferPointer(rebasing: piece[offset..<offset + take]))
                written += take
                offset += take
                if written == lengths[position] { try finishChunk(sink) }
            } catch {
                fail(error)
            }
        }
    }

    func finish() -> HTTPServerResponse {
        // Empty chunks (only an empty object has one) have no bytes to wait for.
        while failure == nil, position < lengths.count, lengths[position] == written {
            do throws(ReceiverError) {
                try finishChunk(try open())
            } catch {
                fail(error)
            }
        }
        if failure == nil, position < lengths.count {
            fail(
                ReceiverError(
                    .lengthMismatch, "the body ended inside chunk \(first + position) of the run",
                    chunk: first + position))
        }
        context.metrics.bytesReceived(received)
        let receipt = (AetherWire.runReceiptField, AetherRunReceiptHeader(index: first, sha256: stored).fieldValue)
        if let failure {
            if [.digestMismatch, .lengthMismatch, .tooLarge].contains(failure.code) { context.metrics.verifyFailed() }
            return ProblemResponse.make(failure, headers: NativeHandler.protocolHeaders + [receipt])
        }
        // One chunk request, however many chunks it carried (the histogram a fleet's bench reads).
        context.metrics.chunkLatency(seconds: AppendBodySink.seconds(since: started))
        return HTTPServerResponse(status: storedNow ? 201 : 200, headers: NativeHandler.protocolHeaders + [receipt])
    }

    /// The body was cut: the chunks finished are stored; the one under way keeps its received prefix as a partial
    /// where the store allows it (`ChunkSink.interrupted`), for a continuation.
    func interrupted() {
        if current?.interrupted() == true { context.metrics.partialKept() }
        current = nil
    }

    /// The sink of the chunk at `position`, opened on its first byte.
    private func open() throws(ReceiverError) -> ChunkSink {
        if let current { return current }
        let index = first + position
        let descriptor = NativeHandler.descriptor(header, lengths: lengths, position: position)
        let sink = try engine.openChunk(id, index: index, descriptor: descriptor, owner: owner)
        current = sink
        written = 0
        return sink
    }

    private func finishChunk(_ sink: ChunkSink) throws(ReceiverError) {
        current = nil
        let outcome = try sink.finish()
        if outcome == .stored { storedNow = true }
        if sink.continues { context.metrics.continuationCompleted() }
        stored.append(header.sha256[position])
        position += 1
        written = 0
    }

    private func fail(_ error: ReceiverError) {
        failure = error
        current = nil
    }
}
