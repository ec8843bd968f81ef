/// How `FileChunkReader` reads: chunk size, byte range, strategy and read-ahead.
public struct ChunkReadOptions: Sendable {
    /// Default chunk size: 4 MiB (within the spec's 256 KiB...16 MiB chunk range).
    public static let defaultChunkSize = 4 << 20
    /// Allowed chunk sizes. 1 byte is allowed so tests can cross every boundary; 256 MiB caps the
    /// memory one chunk may pin (and fits io_uring's 32-bit read length).
    public static let chunkSizeRange = 1...(256 << 20)

    /// Bytes per chunk (the last chunk may be shorter).
    public var chunkSize: Int
    /// The byte range to read; nil reads the whole file.
    public var range: Range<Int64>?
    /// The strategy; nil lets `ReadStrategy.decide` pick. `.ioUring` falls back to `.pread` when refused.
    public var strategy: ReadStrategy?
    /// Chunks read ahead of the one handed out (spec ULTRAFAST_PREFETCH_CHUNK_COUNT = 3), 0...5.
    public var prefetchChunks: Int
    /// Chunks the consumer may hold at once without the pool allocating beyond its bound.
    public var heldChunks: Int

    /// Test hook: pretend io_uring setup failed with this errno (EPERM, ENOSYS ...).
    var simulatedIOUringRefusal: Int32?

    /// Options with the given values; the defaults read a whole file in 4 MiB chunks with 3 ahead.
    public init(
        chunkSize: Int = ChunkReadOptions.defaultChunkSize, range: Range<Int64>? = nil,
        strategy: ReadStrategy? = nil, prefetchChunks: Int = IOConstants.prefetchChunkCount, heldChunks: Int = 2
    ) {
        self.chunkSize = chunkSize
        self.range = range
        self.strategy = strategy
        self.prefetchChunks = prefetchChunks
        self.heldChunks = heldChunks
    }

    func validate() throws(IOError) {
        guard Self.chunkSizeRange.contains(chunkSize) else {
            throw IOError(.invalidArgument, "chunk size \(chunkSize) is outside 1...\(Self.chunkSizeRange.upperBound)")
        }
        guard (0...IOConstants.maximumPrefetchChunkCount).contains(prefetchChunks) else {
            throw IOError(
                .invalidArgument,
                "prefetch of \(prefetchChunks) chunks is outside 0...\(IOConstants.maximumPrefetchChunkCount)")
        }
        guard (1...64).contains(heldChunks) else {
            throw IOError(.invalidArgument, "held chunks \(heldChunks) is outside 1...64")
        }
        if let range, range.lowerBound < 0 {
            throw IOError(.invalidArgument, "range starts at negative offset \(range.lowerBound)")
        }
    }
}
