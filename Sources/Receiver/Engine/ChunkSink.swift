import AetherIO
import Synchronization

/// One chunk or parity shard in progress: the HTTP layer writes the decoded body's pieces, then calls `finish()`.
/// Nothing is visible or recorded before `finish()` returns; a sink dropped unfinished leaves nothing behind.
public final class ChunkSink: Sendable {
    /// What the sink stores.
    enum Target: Sendable, Hashable {
        case chunk(index: Int)
        case parity(group: Int, shard: Int)
    }

    private let engine: UploadEngine
    private let id: UploadID
    private let target: Target
    private let descriptor: ChunkDescriptor
    private let state: Mutex<ChunkSinkState>
    /// The region a chunk is written into in place, held until the writer committed or discarded.
    private let claim: ChunkClaim?
    /// This request's registration as a writer of the upload (no expiry removes it meanwhile).
    private let lease: WriterLease?

    init(
        engine: UploadEngine, id: UploadID, target: Target, descriptor: ChunkDescriptor, writer: (any BlobWriter)?,
        claim: ChunkClaim? = nil, lease: WriterLease? = nil
    ) {
        self.engine = engine
        self.id = id
        self.target = target
        self.descriptor = descriptor
        self.claim = claim
        self.lease = lease
        state = Mutex(ChunkSinkState(writer: writer, limit: descriptor.length))
    }

    deinit {
        _ = underClaim {
            state.withLock { $0.end() }
            return nil
        }
        claim?.release()
        lease?.end()
    }

    /// Runs `body` while this request owns its chunk's region (or without a claim: a parity shard, a retry of a stored
    /// chunk). Once a newer request took the region over, the writer is abandoned (closed, nothing undone: the region
    /// is the newer request's) and the answer is `.unavailable`.
    private func underClaim(_ body: () -> ReceiverError?) -> ReceiverError? {
        guard let claim else { return body() }
        do throws(ReceiverError) {
            return try claim.whileCurrent { body() }
        } catch {
            state.withLock { $0.abandon() }
            return error
        }
    }

    /// The SHA-256 the decoded bytes must have (`finish()` checks it).
    var declaredSHA256: Digest32 { descriptor.sha256 }

    /// Streams `piece` (decoded bytes). More bytes than the descriptor's length is `.tooLarge` (nothing stored).
    public func write(_ piece: UnsafeRawBufferPointer) throws(ReceiverError) {
        let failure: ReceiverError? = underClaim {
            state.withLock { state in
                do throws(ReceiverError) {
                    try unsafe state.write(piece)
                    return nil
                } catch {
                    state.end()
                    return error
                }
            }
        }
        if let failure {
            claim?.release()
            lease?.end()
            throw failure
        }
    }

    /// Streams `piece`.
    public func write(_ piece: [UInt8]) throws(ReceiverError) {
        try unsafe ByteBuffers.withRaw(piece) { raw throws(ReceiverError) in try unsafe write(raw) }
    }

    /// Checks length, SHA-256 and CRC32C, fsyncs, commits the receipt; `.stored` or `.alreadyStored`. Any mismatch
    /// stores nothing. For a chunk, the chain is checked as the stored prefix grows, and parity rebuilds run.
    public func finish() throws(ReceiverError) -> ChunkOutcome {
        guard let taken = state.withLock({ $0.take() }) else {
            throw ReceiverError(.malformedRequest, "this chunk request has already ended")
        }
        defer {
            claim?.release()
            lease?.end()
        }
        guard let claim else { return try settle(taken) }
        do throws(ReceiverError) {
            return try claim.whileCurrent { () throws(ReceiverError) in try settle(taken) }
        } catch {
            // Taken over before this request could settle: the region is the newer request's.
            if !claim.token.isCurrent { taken.writer?.abandon() }
            throw error
        }
    }

    /// Checks the bytes, makes them durable and commits the receipt (under the claim, for a chunk written in place).
    private func settle(_ taken: TakenChunk) throws(ReceiverError) -> ChunkOutcome {
        let chunk: Int? = if case .chunk(let index) = target { index } else { nil }
        guard taken.written == descriptor.length else {
            taken.writer?.discard()
            throw ReceiverError(
                .lengthMismatch, "the body held \(taken.written) bytes, \(descriptor.length) were declared",
                chunk: chunk)
        }
        guard taken.sha256 == descriptor.sha256 else {
            taken.writer?.discard()
            throw ReceiverError(.digestMismatch, "the bytes do not match their SHA-256", chunk: chunk)
        }
        guard taken.crc32c == descriptor.crc32c else {
            taken.writer?.discard()
            throw ReceiverError(.digestMismatch, "the bytes do not match their CRC32C", chunk: chunk)
        }
        guard let writer = taken.writer else { return .alreadyStored }
        do throws(ReceiverError) {
            try writer.durable()
        } catch {
            writer.discard()
            throw error
        }
        let receipt = ChunkReceipt(
            index: 0, length: descriptor.length, sha256: descriptor.sha256, crc32c: descriptor.crc32c,
            link: descriptor.link, rebuilt: false)
        switch target {
        case .chunk(let index): return try engine.commitChunk(id, index: index, receipt: receipt, writer: writer)
        case .parity(let group, let shard):
            return try engine.commitParity(id, group: group, shard: shard, receipt: receipt, writer: writer)
        }
    }
}

struct TakenChunk {
    let writer: (any BlobWriter)?
    let written: Int
    let sha256: Digest32
    let crc32c: UInt32
}

/// The mutable part of a `ChunkSink`, behind its lock.
struct ChunkSinkState: @unchecked Sendable {
    // @unchecked: the writer is used only under the sink's Mutex, by one request.
    var writer: (any BlobWriter)?
    var written = 0
    let limit: Int
    var sha256 = SHA256()
    var crc32c = CRC32C()
    var active = true

    init(writer: (any BlobWriter)?, limit: Int) {
        self.writer = writer
        self.limit = limit
    }

    mutating func write(_ piece: UnsafeRawBufferPointer) throws(ReceiverError) {
        guard active else { throw ReceiverError(.malformedRequest, "this chunk request has already ended") }
        guard piece.count <= limit - written else {
            throw ReceiverError(.tooLarge, "the body is longer than the chunk's declared length")
        }
        try unsafe writer?.write(piece)
        unsafe sha256.update(piece)
        unsafe crc32c.update(piece)
        written += piece.count
    }

    mutating func take() -> TakenChunk? {
        guard active else { return nil }
        active = false
        defer { writer = nil }
        return TakenChunk(writer: writer, written: written, sha256: sha256.finalize(), crc32c: crc32c.value)
    }

    mutating func end() {
        guard active else { return }
        active = false
        writer?.discard()
        writer = nil
    }

    /// Ends without undoing what was written (another request owns the region now).
    mutating func abandon() {
        active = false
        writer?.abandon()
        writer = nil
    }
}
