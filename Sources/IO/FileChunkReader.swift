#if canImport(Glibc)
    import Glibc
#endif

/// Reads a byte range of a regular file as a sequence of chunks, in order, under the TOCTOU guard.
///
/// ```swift
/// let reader = try FileChunkReader(path: path)
/// while let chunk = try reader.next() {
///     chunk.withUnsafeBytes { bytes in /* hash, send ... */ }
/// }
/// ```
///
/// - The file is opened with the `stat`/`open`/`fstat` identity check and a shared `flock`, and its
///   size, mtime and path are re-checked after every chunk: a truncate, append, write or rename-over
///   during the read throws `.fileChanged` (never a silently wrong digest).
/// - The strategy is `options.strategy` or `ReadStrategy.decide(...)`; when io_uring is refused the
///   reader falls back to `pread` and records why in `ioUringRefusal`.
/// - Read-ahead: `options.prefetchChunks` chunks (3 by default) are in flight in io_uring, or hinted
///   with `posix_fadvise`/`madvise(WILLNEED)` for pread and mmap. Memory is bounded: buffers come from
///   a pool of `prefetchChunks + heldChunks + 1`, and nothing holds the whole file.
/// - The end of the file before the end of the range is `.unexpectedEndOfFile` (or `.fileChanged`
///   when the size moved); a failed read is `.systemCall` with errno and path (ERR-1).
///
/// Not `Sendable`: one consumer calls `next()`; the chunks it returns are `Sendable`.
public final class FileChunkReader {
    /// The path being read, as text for messages (`FilePath.description`: lossless, non-UTF-8 bytes escaped).
    public let path: String
    /// The path being read, as the bytes given to open(2).
    public let filePath: FilePath
    /// The file's identity when it was opened.
    public let identity: FileIdentity
    /// The byte range being read.
    public let range: Range<Int64>
    /// Bytes per chunk (the last may be shorter).
    public let chunkSize: Int
    /// How many chunks the range holds (0 for an empty range).
    public let chunkCount: Int
    /// The strategy in use.
    public let strategy: ReadStrategy
    /// Why io_uring is not in use, when it was wanted and refused (EPERM/ENOSYS ...).
    public let ioUringRefusal: IOError?

    fileprivate let file: GuardedFile
    private let prefetch: Int
    private let pool: ChunkBufferPool
    private var ring: URingQueue?
    private var nextIndex = 0
    private var failure: IOError?
    private var finished = false
    // io_uring bookkeeping: buffers whose reads are queued, completions not yet consumed.
    private var submitted = 0
    private var inFlight: [Int: AlignedBuffer] = [:]
    private var completions: [Int: Int32] = [:]

    /// Opens `path` for reading with `options`.
    public convenience init(path: String, options: ChunkReadOptions = ChunkReadOptions()) throws(IOError) {
        try self.init(path: FilePath(path), options: options)
    }

    /// Opens `path` (bytes, exactly as given) for reading with `options`.
    public init(path filePath: FilePath, options: ChunkReadOptions = ChunkReadOptions()) throws(IOError) {
        try options.validate()
        let path = filePath.description
        let file = try GuardedFile(path: filePath)
        let size = file.identity.size
        let range = options.range ?? 0..<size
        guard range.upperBound <= size else {
            throw IOError(
                .invalidArgument, "range ends at \(range.upperBound), past the file's \(size) bytes", path: path)
        }
        let length = range.upperBound - range.lowerBound
        let chunkSize = options.chunkSize
        self.path = path
        self.filePath = filePath
        self.file = file
        self.identity = file.identity
        self.range = range
        self.chunkSize = chunkSize
        self.chunkCount = Int((length + Int64(chunkSize) - 1) / Int64(chunkSize))
        self.prefetch = options.prefetchChunks

        let wantsRing =
            options.strategy == .ioUring
            || (options.strategy == nil
                && ReadStrategy.decide(length: length, chunkSize: chunkSize, ioUringAvailable: true) == .ioUring)
        var ring: URingQueue?
        var refusal: IOError?
        if wantsRing {
            do throws(IOError) {
                if let simulated = options.simulatedIOUringRefusal {
                    throw IOError(.ioUringUnavailable, "io_uring setup refused (simulated)", errno: simulated)
                }
                ring = try URingQueue(entries: UInt32(options.prefetchChunks + 1))
            } catch {
                refusal = error
            }
        }
        if let requested = options.strategy {
            strategy = requested == .ioUring && ring == nil ? .pread : requested
        } else {
            strategy = ReadStrategy.decide(length: length, chunkSize: chunkSize, ioUringAvailable: ring != nil)
        }
        self.ring = strategy == .ioUring ? ring : nil
        self.ioUringRefusal = refusal
        let bufferSize = Int(max(1, min(Int64(chunkSize), length)))
        pool = ChunkBufferPool(bufferSize: bufferSize, capacity: options.prefetchChunks + options.heldChunks + 1)
        if strategy != .mmap { Syscall.adviseSequential(file.descriptor) }
    }

    /// The next chunk, or nil after the last one. After an error every call throws that error.
    public func next() throws(IOError) -> Chunk? {
        if let failure { throw failure }
        do {
            return try readNext()
        } catch {
            failure = error
            drainRing()
            throw error
        }
    }

    /// Buffers this reader ever allocated (at most the pool's bound when chunks are released promptly).
    var bufferAllocations: Int { pool.allocationCount }

    private func readNext() throws(IOError) -> Chunk? {
        guard nextIndex < chunkCount else {
            if !finished {
                // An empty range still proves the file did not change between open and the end.
                try file.verifyUnchanged()
                finished = true
            }
            return nil
        }
        let index = nextIndex
        let chunk: Chunk
        switch strategy {
        case .pread: chunk = try readWithPread(index)
        case .mmap: chunk = try readMapped(index)
        case .ioUring: chunk = try readWithRing(index)
        }
        try file.verifyUnchanged()
        nextIndex += 1
        if nextIndex == chunkCount { finished = true }
        return chunk
    }

    private func bounds(_ index: Int) -> (offset: Int64, count: Int) {
        let offset = range.lowerBound + Int64(index) * Int64(chunkSize)
        return (offset, Int(min(Int64(chunkSize), range.upperBound - offset)))
    }

    // Asks the kernel to start reading the chunks `prefetch` ahead (pread and mmap read-ahead).
    private func hintAhead(after index: Int) {
        guard prefetch > 0 else { return }
        let first = index == 0 ? 1 : index + prefetch
        let last = min(index + prefetch, chunkCount - 1)
        guard first <= last else { return }
        let start = bounds(first).offset
        let end = bounds(last).offset + Int64(bounds(last).count)
        Syscall.adviseWillNeed(file.descriptor, offset: start, length: end - start)
    }

    private func readWithPread(_ index: Int) throws(IOError) -> Chunk {
        let (offset, count) = bounds(index)
        hintAhead(after: index)
        let buffer = pool.acquire()
        let done: Int
        do {
            done = try unsafe Syscall.preadFully(
                file.descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer.memory[0..<count]),
                offset: offset, path: path)
        } catch {
            pool.release(buffer)
            throw error
        }
        guard done == count else {
            pool.release(buffer)
            try endOfFile(at: offset + Int64(done))
        }
        return Chunk(index: index, offset: offset, count: count, storage: .pooled(buffer, pool))
    }

    private func readMapped(_ index: Int) throws(IOError) -> Chunk {
        let (offset, count) = bounds(index)
        // Never map past a size that already moved: touching a page beyond EOF raises SIGBUS.
        try file.verifyUnchanged()
        hintAhead(after: index)
        let page = Int64(Syscall.pageSize)
        let start = offset / page * page
        let skip = Int(offset - start)
        let region = try unsafe Syscall.mapPrivate(file.descriptor, offset: start, length: skip + count, path: path)
        return unsafe Chunk(index: index, offset: offset, count: count, storage: .mapped(region: region, skip: skip))
    }

    private func readWithRing(_ index: Int) throws(IOError) -> Chunk {
        guard let ring else { throw IOError(.ioUringUnavailable, "io_uring ring is gone", path: path) }
        // Keep `prefetch` reads queued beyond the one we need now.
        let target = min(chunkCount, index + 1 + prefetch)
        if submitted < target {
            while submitted < target {
                let (offset, count) = bounds(submitted)
                let buffer = pool.acquire()
                do {
                    try unsafe ring.prepareRead(
                        descriptor: file.descriptor,
                        into: UnsafeMutableRawBufferPointer(rebasing: buffer.memory[0..<count]), offset: offset,
                        tag: UInt64(submitted), path: path)
                } catch {
                    pool.release(buffer)
                    throw error
                }
                inFlight[submitted] = buffer
                submitted += 1
            }
            try ring.submit(path: path)
        }
        while completions[index] == nil {
            let (tag, result) = try ring.waitForCompletion(path: path)
            completions[Int(tag)] = result
        }
        let result = completions.removeValue(forKey: index) ?? -EIO
        guard let buffer = inFlight.removeValue(forKey: index) else {
            throw IOError(.systemCall, "io_uring completed a read that was not queued", path: path)
        }
        let (offset, count) = bounds(index)
        guard result >= 0 else {
            pool.release(buffer)
            throw Syscall.failure("io_uring read", code: -result, path: path)
        }
        var done = Int(result)
        if done < count {
            // A short completion: finish the chunk with pread, which tells EOF from a short read.
            do {
                done += try unsafe Syscall.preadFully(
                    file.descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer.memory[done..<count]),
                    offset: offset + Int64(done), path: path)
            } catch {
                pool.release(buffer)
                throw error
            }
        }
        guard done == count else {
            pool.release(buffer)
            try endOfFile(at: offset + Int64(done))
        }
        return Chunk(index: index, offset: offset, count: count, storage: .pooled(buffer, pool))
    }

    private func endOfFile(at offset: Int64) throws(IOError) -> Never {
        // A size that moved is the real cause; otherwise the file ended early with nothing changed.
        try file.verifyUnchanged()
        throw IOError(
            .unexpectedEndOfFile, "\(path) ended at \(offset), before the range end \(range.upperBound)", path: path)
    }

    // Waits out reads still queued in the kernel before their buffers go back to the pool; if waiting
    // fails, the buffers are leaked rather than reused while the kernel may still write into them.
    private func drainRing() {
        guard let ring else { return }
        for (index, _) in completions { if let buffer = inFlight.removeValue(forKey: index) { pool.release(buffer) } }
        completions.removeAll()
        while !inFlight.isEmpty {
            guard let (tag, _) = try? ring.waitForCompletion(path: path) else {
                inFlight.removeAll()
                break
            }
            if let buffer = inFlight.removeValue(forKey: Int(tag)) { pool.release(buffer) }
        }
        self.ring = nil
    }

    deinit { drainRing() }
}

extension FileChunkReader {
    /// The file's fingerprint (identity plus SHA-256 of the first 4 KiB), read through this reader's
    /// open, locked descriptor.
    func fingerprint() throws(IOError) -> FileFingerprint { try FileFingerprint(file: file) }
}
