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
