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

/// Constants of the IO layer, from the upload engine spec.
public enum IOConstants {
    /// ULTRAFAST_PREFETCH_CHUNK_COUNT: chunks read ahead to keep a fast uplink fed.
    public static let prefetchChunkCount = 3
    /// The spec's upper bound on read-ahead ("> 5 chunks uses too much memory").
    public static let maximumPrefetchChunkCount = 5
    /// Compressibility probe: one sample of this many bytes ...
    public static let compressibilitySampleSize = 32 << 10
    /// ... every this many bytes of a chunk (spec: "every 5MB: take 32KB sample").
    public static let compressibilitySampleInterval = 5 << 20
    /// Bytes hashed into a `FileFingerprint`'s head digest.
    public static let fingerprintHeadSize = 4096
    /// SHA-256 and CRC32C run over slices of this size in turn, so each slice is still in L2 for the
    /// second pass (spec HASH_BUFFER_SIZE = 128 KB).
    public static let hashSliceSize = 128 << 10
}
