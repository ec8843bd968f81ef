import AetherIO
import Synchronization

/// One append in progress: the HTTP layer writes the body's pieces as they arrive, then calls `finish()` (the body
/// ended) or `interrupted()` (the connection broke). Exactly one of them ends the sink; a sink nobody ends keeps
/// the stored offset as it was.
public final class AppendSink: Sendable {
    private let engine: UploadEngine
    private let id: UploadID
    private let request: AppendRequest
    private let state: Mutex<AppendSinkState>

    init(engine: UploadEngine, id: UploadID, request: AppendRequest, limit: Int64?, writer: (any BlobWriter)?) {
        self.engine = engine
        self.id = id
        self.request = request
        state = Mutex(AppendSinkState(writer: writer, limit: limit, request: request))
    }

    deinit {
        let active = state.withLock { $0.end() }
        if active { engine.releaseAppend(id) }
    }

    /// Bytes taken so far.
    public var bytesWritten: Int64 { state.withLock { $0.written } }

    /// Streams `piece` to storage. Bytes past the upload's size or the declared length end the append with
    /// `.tooLarge` / `.lengthMismatch`, storing nothing of it.
    public func write(_ piece: UnsafeRawBufferPointer) throws(ReceiverError) {
        let failure: ReceiverError? = state.withLock { state in
            do throws(ReceiverError) {
                try unsafe state.write(piece)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            abandon()
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
        defer { engine.releaseAppend(id) }
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

    /// The connection broke mid-body: keeps (fsync, commit) the bytes received so far, so the client resumes
    /// from there; with a per-append digest the whole append is dropped instead. Returns the stored offset.
    @discardableResult
    public func interrupted() throws(ReceiverError) -> Int64 {
        guard let taken = state.withLock({ $0.take() }) else {
            throw ReceiverError(.malformedRequest, "this append has already ended")
        }
        defer { engine.releaseAppend(id) }
        if request.digest != nil || taken.written == 0 {
            taken.writer?.discard()
            return request.offset
        }
        return try engine.commitAppend(id, request: request, taken: taken, completing: false).offset
    }

    private func abandon() {
        if let taken = state.withLock({ $0.take() }) {
            taken.writer?.discard()
            engine.releaseAppend(id)
        }
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
}
