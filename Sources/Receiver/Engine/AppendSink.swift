import AetherIO
import Synchronization

/// One append in progress: the HTTP layer writes the body's pieces as they arrive, then calls `finish()` (the body
/// ended) or `interrupted()` (the connection broke). Exactly one of them ends the sink; a sink nobody ends keeps
/// the stored offset as it was.
///
/// The sink holds its upload's byte stream (`ChunkClaim`): a newer append of the same client takes it over once it
/// waited `ReceiverLimits.chunkClaimWaitSeconds` (this request's connection froze or died unseen). From then on
/// every call of this sink changes nothing (`.unavailable`): its writer is let go without undoing anything, since the
/// stream past the committed offset is the newer request's.
public final class AppendSink: Sendable {
    private let engine: UploadEngine
    private let id: UploadID
    private let request: AppendRequest
    private let state: Mutex<AppendSinkState>
    /// The upload's byte stream, held until the writer committed or discarded (nil for a retried completion).
    private let claim: ChunkClaim?
    /// This request's registration as a writer of the upload (no expiry removes it meanwhile).
    private let lease: WriterLease?

    init(
        engine: UploadEngine, id: UploadID, request: AppendRequest, limit: Int64?, writer: (any BlobWriter)?,
        claim: ChunkClaim? = nil, lease: WriterLease? = nil
    ) {
        self.engine = engine
        self.id = id
        self.request = request
        self.claim = claim
        self.lease = lease
        state = Mutex(AppendSinkState(writer: writer, limit: limit, request: request))
    }

    deinit {
        _ = underClaim { () throws(ReceiverError) in state.withLock { _ = $0.end() } }
        release()
    }

    /// Bytes taken so far.
    public var bytesWritten: Int64 { state.withLock { $0.written } }

    /// Streams `piece` to storage. Bytes past the upload's size or the declared length end the append with
    /// `.tooLarge` / `.lengthMismatch`, storing nothing of it.
    public func write(_ piece: UnsafeRawBufferPointer) throws(ReceiverError) {
        let outcome: Result<Void, ReceiverError> = underClaim { () throws(ReceiverError) in
            let failure: ReceiverError? = state.withLock { state in
                do throws(ReceiverError) {
                    try unsafe state.write(piece)
                    return nil
                } catch {
                    _ = state.end()
                    return error
                }
            }
            if let failure { throw failure }
        }
        if case .failure(let failure) = outcome {
            release()
            throw failure
        }
    }

    /// Streams `piece` to storage.
    public func write(_ piece: [UInt8]) throws(ReceiverError) {
        try unsafe ByteBuffers.withRaw(piece) { raw throws(ReceiverError) in try unsafe write(raw) }
    }

    /// The body ended: checks the declared length and digest, fsyncs, commits the new offset in one catalogue
    /// transaction, and completes the upload when it reached its size. Returns only once all of that is durable.
    public func finish() throws(ReceiverError) -> AppendResult {
        guard let taken = state.withLock({ $0.take() }) else {
            throw ReceiverError(.malformedRequest, "this append has already ended")
        }
        defer { release() }
        return try settle(taken) { () throws(ReceiverError) -> AppendResult in
            if let length = request.length, taken.written != length {
                taken.writer?.discard()
                throw ReceiverError(.lengthMismatch, "the body held \(taken.written) bytes, \(length) were declared")
            }
            if let digest = request.digest, !taken.digestMatches(digest) {
                taken.writer?.discard()
                throw ReceiverError(.digestMismatch, "the append's bytes do not match its \(digest.algorithm) digest")
            }
            return try engine.commitAppend(id, request: request, taken: taken, completing: true)
        }
    }

    /// The connection broke mid-body: keeps (fsync, commit) the bytes received so far, so the client resumes
    /// from there; with a per-append digest the whole append is dropped instead. Returns the stored offset. Taken
    /// over by a newer append, it keeps nothing (`.unavailable`).
    @discardableResult
    public func interrupted() throws(ReceiverError) -> Int64 {
        guard let taken = state.withLock({ $0.take() }) else {
            throw ReceiverError(.malformedRequest, "this append has already ended")
        }
        defer { release() }
        return try settle(taken) { () throws(ReceiverError) -> Int64 in
            if request.digest != nil || taken.written == 0 {
                taken.writer?.discard()
                return request.offset
            }
            return try engine.commitAppend(id, request: request, taken: taken, completing: false).offset
        }
    }

    /// Runs `body` on the taken append while this request still holds the stream; once taken over, the writer is
    /// let go without undoing anything and the answer is `.unavailable`.
    private func settle<T>(_ taken: TakenAppend, _ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        guard let claim else { return try body() }
        do throws(ReceiverError) {
            return try claim.whileCurrent(body)
        } catch {
            if !claim.token.isCurrent { taken.writer?.abandon() }
            throw error
        }
    }

    /// Runs `body` while this request holds the stream (or without a claim: a retried completion). Once a newer
    /// append took the stream over, the writer is let go without undoing anything and the failure is
    /// `.unavailable`.
    private func underClaim(_ body: () throws(ReceiverError) -> Void) -> Result<Void, ReceiverError> {
        do throws(ReceiverError) {
            guard let claim else { return .success(try body()) }
            return .success(try claim.whileCurrent(body))
        } catch {
            if let claim, !claim.token.isCurrent { state.withLock { $0.abandon() } }
            return .failure(error)
        }
    }

    /// Lets another append take the stream and ends this request's registration as a writer.
    private func release() {
        claim?.release()
        lease?.end()
    }
}

/// What an ended append hands to the engine.
struct TakenAppend {
    let writer: (any BlobWriter)?
    let written: Int64
    let sha256: SHA256?
    let sha1: SHA1?
    let crc32: CRC32?

    func digestMatches(_ digest: AppendRequest.Digest) -> Bool {
        switch digest.algorithm {
        case .sha256: sha256.map { ConstantTime.equals($0.finalize().bytes, digest.bytes) } ?? false
        case .sha1: sha1.map { ConstantTime.equals($0.finalize(), digest.bytes) } ?? false
        case .crc32:
            crc32.map { crc in
                let value = crc.value
                let bytes = [
                    UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff),
                ]
                return ConstantTime.equals(bytes, digest.bytes)
            } ?? false
        }
    }
}

/// The mutable part of an `AppendSink`, behind its lock.
struct AppendSinkState: @unchecked Sendable {
    // @unchecked: the writer is used only under the sink's Mutex, by one request.
    var writer: (any BlobWriter)?
    var written: Int64 = 0
    let limit: Int64?
    let declaredLength: Int64?
    var sha256: SHA256?
    var sha1: SHA1?
    var crc32: CRC32?
    var active = true

    init(writer: (any BlobWriter)?, limit: Int64?, request: AppendRequest) {
        self.writer = writer
        self.limit = limit
        declaredLength = request.length
        // The whole-object digest is kept running when the stream starts here; per-append digests as declared.
        if request.offset == 0 || request.digest?.algorithm == .sha256 { sha256 = SHA256() }
        if request.digest?.algorithm == .sha1 { sha1 = SHA1() }
        if request.digest?.algorithm == .crc32 { crc32 = CRC32() }
    }

    mutating func write(_ piece: UnsafeRawBufferPointer) throws(ReceiverError) {
        guard active else { throw ReceiverError(.malformedRequest, "this append has already ended") }
        if unsafe piece.isEmpty { return }
        let total = written + Int64(piece.count)
        if let limit, total > limit {
            throw ReceiverError(.tooLarge, "the append goes past the upload's size")
        }
        if let declaredLength, total > declaredLength {
            throw ReceiverError(.lengthMismatch, "the body is longer than its declared length")
        }
        guard let writer else { throw ReceiverError(.tooLarge, "the upload is complete; no bytes are taken") }
        try unsafe writer.write(piece)
        unsafe sha256?.update(piece)
        unsafe sha1?.update(piece)
        unsafe crc32?.update(piece)
        written = total
    }

    /// Ends the sink once: the writer and digests, or nil when it already ended.
    mutating func take() -> TakenAppend? {
        guard active else { return nil }
        active = false
        defer { writer = nil }
        return TakenAppend(writer: writer, written: written, sha256: sha256, sha1: sha1, crc32: crc32)
    }

    /// Ends the sink without a result; true when it was still active.
    mutating func end() -> Bool {
        guard active else { return false }
        active = false
        writer?.discard()
        writer = nil
        return true
    }

    /// Ends without undoing what was written (a newer append owns the stream now).
    mutating func abandon() {
        active = false
        writer?.abandon()
        writer = nil
    }
}
