import Dispatch

/// Digests a file chunk by chunk and hands out each chunk's bytes with its `ChunkDigest`, in order:
/// the streaming form that the Integrity layer (Merkle leaf + commitment link per chunk) and the
/// Uploader (send the chunk with its digests) consume. `finish()` then gives the whole-file digest.
///
/// ```swift
/// let stream = try FileDigestStream(path: path)
/// while let (chunk, digest) = try stream.next() { /* use chunk's bytes and digest, then drop chunk */ }
/// let file = try stream.finish()
/// ```
///
/// Two cores (when `parallel`): the calling thread reads each chunk and computes its SHA-256; one
/// worker thread runs the sequential whole-file SHA-256 and each chunk's CRC32C and compressibility
/// probe. That splits the work evenly (read + SHA-256 against SHA-256 + CRC32C + probe), so the
/// whole run takes about as long as one SHA-256 pass over the file. The hand-offs are bounded
/// channels, and a chunk is handed out one step after it was read (while the worker finishes it),
/// so at most `prefetchChunks + 4` chunk buffers exist at once.
///
/// Not `Sendable`: one consumer calls `next()`. Chunks and digests it returns are `Sendable`.
public final class FileDigestStream {
    /// The reader underneath (strategy, identity, range, chunk count).
    public let reader: FileChunkReader
    /// The file's fingerprint when it was opened.
    public let fingerprint: FileFingerprint

    private enum WorkerResult: Sendable {
        case chunk(index: Int, crc32c: UInt32, compressibility: Double)
        case whole(Digest32)
    }

    private let toWorker: BoundedChannel<Chunk>?
    private let fromWorker: BoundedChannel<WorkerResult>?
    private let localHasher = ChunkHasher()
    private var serialSHA = SHA256()
    private var pending: (chunk: Chunk, sha256: Digest32)?
    private var readerDone = false
    private var workerClosed = false
    private var wholeCRC: UInt32 = 0
    private var weightedCompressibility = 0.0
    private var failure: IOError?

    /// Opens `path`; `parallel` runs the whole-file hash on a second thread.
    public convenience init(
        path: String, options: ChunkReadOptions = ChunkReadOptions(), parallel: Bool = true
    ) throws(IOError) {
        try self.init(path: FilePath(path), options: options, parallel: parallel)
    }

    /// Opens `path` (bytes, exactly as given); `parallel` runs the whole-file hash on a second thread.
    public init(path: FilePath, options: ChunkReadOptions = ChunkReadOptions(), parallel: Bool = true) throws(IOError) {
        var options = options
        // The chunks this stream holds itself: the pending one, the current one, two queued for the worker.
        options.heldChunks = max(options.heldChunks, 4)
        reader = try FileChunkReader(path: path, options: options)
        fingerprint = try reader.fingerprint()
        guard parallel else {
            toWorker = nil
            fromWorker = nil
            return
        }
        let toWorker = BoundedChannel<Chunk>(capacity: 2)
        let fromWorker = BoundedChannel<WorkerResult>(capacity: 6)
        self.toWorker = toWorker
        self.fromWorker = fromWorker
        DispatchQueue(label: "aether.io.whole-file-digest").async {
            let hasher = ChunkHasher()
            var whole = SHA256()
            while let chunk = toWorker.receive() {
                let (crc, compressibility) = unsafe chunk.withUnsafeBytes { bytes in
                    unsafe whole.update(bytes)
                    return unsafe hasher.checksumAndProbe(bytes)
                }
                fromWorker.send(.chunk(index: chunk.index, crc32c: crc, compressibility: compressibility))
            }
            fromWorker.send(.whole(whole.finalize()))
        }
    }

    /// The next chunk with its digest, or nil after the last. After an error every call throws it.
    public func next() throws(IOError) -> (chunk: Chunk, digest: ChunkDigest)? {
        if let failure { throw failure }
        do {
            return try step()
        } catch {
            failure = error
            closeWorker()
            throw error
        }
    }

    private func step() throws(IOError) -> (chunk: Chunk, digest: ChunkDigest)? {
        guard let toWorker, let fromWorker else { return try serialStep() }
        while true {
            var current: (chunk: Chunk, sha256: Digest32)?
            if !readerDone {
                if let chunk = try reader.next() {
                    toWorker.send(chunk)
                    current = (chunk, unsafe chunk.withUnsafeBytes { unsafe SHA256.hash($0) })
                } else {
                    readerDone = true
                    closeWorker()
                }
            }
            if let (chunk, sha256) = pending {
                guard case .chunk(let index, let crc, let compressibility) = fromWorker.receive(), index == chunk.index
                else {
                    throw IOError(.invalidArgument, "digest worker fell out of step at chunk \(chunk.index)")
                }
                pending = current
                return (chunk, record(chunk, sha256: sha256, crc32c: crc, compressibility: compressibility))
            }
            guard let current else { return nil }
            pending = current
        }
    }

    private func serialStep() throws(IOError) -> (chunk: Chunk, digest: ChunkDigest)? {
        guard let chunk = try reader.next() else {
            readerDone = true
            return nil
        }
        let parts = unsafe chunk.withUnsafeBytes { bytes in
            unsafe serialSHA.update(bytes)
            return unsafe localHasher.digest(bytes)
        }
        return (
            chunk, record(chunk, sha256: parts.sha256, crc32c: parts.crc32c, compressibility: parts.compressibility)
        )
    }

    private func record(_ chunk: Chunk, sha256: Digest32, crc32c: UInt32, compressibility: Double) -> ChunkDigest {
        wholeCRC = CRC32C.combine(wholeCRC, crc32c, lengthOfB: chunk.count)
        weightedCompressibility += compressibility * Double(chunk.count)
        return ChunkDigest(
            index: chunk.index, offset: chunk.offset, length: chunk.count, sha256: sha256, crc32c: crc32c,
            compressibility: compressibility)
    }

    /// The whole-range digest. Call after `next()` returned nil; earlier is `.invalidArgument`.
    public func finish() throws(IOError) -> FileDigest {
        if let failure { throw failure }
        guard readerDone, pending == nil else {
            throw IOError(.invalidArgument, "finish() called before the last chunk was taken", path: reader.path)
        }
        let sha256: Digest32
        if let fromWorker {
            guard case .whole(let digest) = fromWorker.receive() else {
                throw IOError(.invalidArgument, "digest worker ended without the whole-file digest", path: reader.path)
            }
            sha256 = digest
        } else {
            sha256 = serialSHA.finalize()
        }
        let length = reader.range.upperBound - reader.range.lowerBound
        return FileDigest(
            path: reader.path, fingerprint: fingerprint, range: reader.range, sha256: sha256, crc32c: wholeCRC,
            chunkSize: reader.chunkSize, chunkCount: reader.chunkCount,
            compressibility: length == 0 ? 0 : weightedCompressibility / Double(length), strategy: reader.strategy)
    }

    private func closeWorker() {
        guard let toWorker, !workerClosed else { return }
        workerClosed = true
        toWorker.close()
    }

    deinit {
        // The worker drains what it was sent and exits; the chunks it holds return to their pool.
        closeWorker()
    }
}
