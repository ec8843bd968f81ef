import AetherIO
import Synchronization

/// One chunk or parity shard in progress: the HTTP layer writes the decoded body's pieces, then calls `finish()`.
/// Nothing is visible or recorded before `finish()` returns; a sink dropped unfinished leaves nothing behind. A chunk
/// written in place into a store that keeps cut prefixes leaves its received prefix as a partial when its body is cut
/// (`interrupted()`) or a newer request takes it over (`handOver()`), for a continuation (`docs/PROTOCOL.md` 3.2.2).
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
    /// Whether a cut keeps the received prefix: a chunk written in place, into a store that keeps cut prefixes.
    private let keepsPrefix: Bool
    /// False for a continuation of a chunk stored since with the same SHA-256: its bytes are counted and dropped,
    /// and the answer is "already stored" (what the receiver holds was checked when it was stored).
    private let checksBytes: Bool
    /// Whether this request continues a partial (`resumed` at `init`).
    let continues: Bool

    /// A sink; `resumed` (a partial taken over, its bytes in place before the writer's start) starts the count and
    /// the hash states where the cut request left them; `from` without `resumed`: a continuation of a chunk stored
    /// already (no writer), whose bytes are not checked.
    init(
        engine: UploadEngine, id: UploadID, target: Target, descriptor: ChunkDescriptor, writer: (any BlobWriter)?,
        claim: ChunkClaim? = nil, lease: WriterLease? = nil, resumed: ChunkPartial? = nil, from: Int? = nil
    ) {
        self.engine = engine
        self.id = id
        self.target = target
        self.descriptor = descriptor
        self.claim = claim
        self.lease = lease
        keepsPrefix = claim != nil && writer != nil && engine.keepsCutPrefixes
        checksBytes = resumed != nil || from == nil
        continues = resumed != nil
        var initial = ChunkSinkState(writer: writer, limit: descriptor.length)
        if let resumed {
            initial.written = resumed.received
            initial.sha256 = resumed.sha256
            initial.crc32c = resumed.crc32c
        } else if let from {
            initial.written = from
        }
        state = Mutex(initial)
        if keepsPrefix { claim?.token.hold(self) }
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

    /// The body was cut (the connection was reset or closed) before the chunk's last byte: a chunk that keeps its
    /// prefix makes what arrived durable, leaves it in place and keeps it as a partial with its hash states; anything
    /// else is undone as when the sink is dropped. Returns whether a partial was kept.
    @discardableResult
    public func interrupted() -> Bool {
        var kept = false
        _ = underClaim {
            guard keepsPrefix, case .chunk(let index) = target else {
                state.withLock { $0.end() }
                return nil
            }
            if let partial = state.withLock({ $0.keep(descriptor, undoing: true) }) {
                kept = engine.keepPartial(partial, id: id, index: index)
            }
            return nil
        }
        claim?.release()
        lease?.end()
        return kept
    }

    /// A newer request takes the chunk over (`ClaimToken.revoke`, which holds the claim's lock): what this request
    /// received is made durable, left in place and kept as a partial for the newer request, which may continue it.
    /// This request can write nothing more; a failure to make it durable keeps nothing and undoes nothing (the region
    /// is the newer request's).
    func handOver() {
        guard keepsPrefix, case .chunk(let index) = target else { return }
        if let partial = state.withLock({ $0.keep(descriptor, undoing: false) }) {
            engine.keepPartial(partial, id: id, index: index)
        }
    }

    /// What this request received so far, when a cut would keep it as a partial (0 < received < length).
    var prefixIfCut: Int? {
        guard keepsPrefix else { return nil }
        return state.withLock { state in
            state.active && state.writer != nil && state.written > 0 && state.written < state.limit
                ? state.written : nil
        }
    }

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
        if !checksBytes { return .alreadyStored }
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

    /// Ends keeping what was written as a partial: made durable and left in place (the writer closed without undoing
    /// anything), with the count and the hash states. Nothing is kept when nothing or everything was written, or the
    /// bytes could not be made durable; those are then undone when `undoing` (this request still owns the region),
    /// else left (another request owns it now).
    mutating func keep(_ descriptor: ChunkDescriptor, undoing: Bool) -> ChunkPartial? {
        guard active, let writer else { return nil }
        active = false
        self.writer = nil
        guard written > 0, written < limit else {
            if undoing { writer.discard() } else { writer.abandon() }
            return nil
        }
        do throws(ReceiverError) {
            try writer.durable()
        } catch {
            if undoing { writer.discard() } else { writer.abandon() }
            return nil
        }
        writer.abandon()
        return ChunkPartial(descriptor: descriptor, received: written, sha256: sha256, crc32c: crc32c)
    }

    /// Ends without undoing what was written (another request owns the region now).
    mutating func abandon() {
        active = false
        writer?.abandon()
        writer = nil
    }
}
