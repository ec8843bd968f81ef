/// One-call forms of `FileDigestStream`.
public enum FileDigester {
    /// Digests `path`: the whole-range digest plus every chunk's digest, in order.
    public static func digest(
        path: String, options: ChunkReadOptions = ChunkReadOptions(), parallel: Bool = true
    ) throws(IOError) -> (file: FileDigest, chunks: [ChunkDigest]) {
        try digest(path: FilePath(path), options: options, parallel: parallel)
    }

    /// Digests `path` (bytes, exactly as given): the whole-range digest plus every chunk's digest, in order.
    public static func digest(
        path: FilePath, options: ChunkReadOptions = ChunkReadOptions(), parallel: Bool = true
    ) throws(IOError) -> (file: FileDigest, chunks: [ChunkDigest]) {
        let stream = try FileDigestStream(path: path, options: options, parallel: parallel)
        var chunks: [ChunkDigest] = []
        chunks.reserveCapacity(stream.reader.chunkCount)
        while let (_, digest) = try stream.next() { chunks.append(digest) }
        return (try stream.finish(), chunks)
    }

    /// Digests `path`, calling `body` with each chunk (bytes from the pool) and its digest in order,
    /// on the calling thread. The chunk is released when `body` returns unless `body` keeps it.
    /// An error thrown by `body` stops the read and is rethrown.
    public static func digest(
        path: String, options: ChunkReadOptions = ChunkReadOptions(), parallel: Bool = true,
        each body: (Chunk, ChunkDigest) throws -> Void
    ) throws -> FileDigest {
        try digest(path: FilePath(path), options: options, parallel: parallel, each: body)
    }

    /// `digest(path:options:parallel:each:)` for a path given as bytes.
    public static func digest(
        path: FilePath, options: ChunkReadOptions = ChunkReadOptions(), parallel: Bool = true,
        each body: (Chunk, ChunkDigest) throws -> Void
    ) throws -> FileDigest {
        let stream = try FileDigestStream(path: path, options: options, parallel: parallel)
        while let (chunk, digest) = try stream.next() { try body(chunk, digest) }
        return try stream.finish()
    }
}
