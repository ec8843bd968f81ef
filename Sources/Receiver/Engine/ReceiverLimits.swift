/// What the receiver accepts (advertised in `Aether-Capabilities`, `Upload-Limit` and tus headers).
public struct ReceiverLimits: Sendable, Hashable {
    /// Chunk sizes must be a multiple of this (16 KiB).
    public static let chunkGranularity = 16 * 1024

    /// Largest object in bytes.
    public var maximumObjectSize: Int64
    /// Smallest native chunk size in bytes (a multiple of 16 KiB).
    public var minimumChunkSize: Int
    /// Largest native chunk size in bytes (a multiple of 16 KiB).
    public var maximumChunkSize: Int
    /// Most chunks in one native upload.
    public var maximumChunks: Int
    /// Chunk requests accepted at once per upload (advertised as `parallel`).
    public var maximumParallelChunks: Int
    /// Open (not complete, failed, expired) uploads one client may hold at once.
    public var maximumOpenUploadsPerClient: Int
    /// Seconds an idle upload is kept before `expire` removes it.
    public var expirySeconds: Int64
    /// Largest metadata (keys and values together) in bytes.
    public var maximumMetadataBytes: Int
    /// How long a request for a native chunk waits while another request writes the same chunk, or an IETF or tus
    /// append while another append to the same upload runs, in seconds, before it takes the chunk or the stream
    /// over (the older request, usually one whose connection was reset or froze without the receiver seeing it, can
    /// then write, zero or commit nothing more): a retry racing its own first attempt that ends soon finds the chunk
    /// stored, or the offset moved.
    public var chunkClaimWaitSeconds: Double = 2
    /// Most chunks one native run request may carry (advertised as `max-run`, `docs/PROTOCOL.md` 3.2.1).
    public var maximumRunChunks = 64
    /// Most whole files one batch request may carry (advertised as `max-batch`, `docs/PROTOCOL.md` 3.10; at most
    /// `AetherWire.maximumBatchFiles`, 256); 0: batches are refused.
    public var maximumBatchFiles = 256
    /// Most bytes of files one batch may carry (advertised as `batch-bytes`).
    public var maximumBatchBytes: Int64 = 64 << 20
    /// Most received prefixes of cut chunks kept for one upload (`docs/PROTOCOL.md` 3.2.2), at most
    /// `AetherWire.maximumPartials` (what a status document lists); when full, the oldest is dropped.
    public var maximumPartialsPerUpload = 64
    /// Most received prefixes of cut chunks kept in all (each a few hundred bytes of memory, no file descriptor);
    /// when full, the oldest is dropped.
    public var maximumPartials = 4096
    /// Whether dedup (proof of possession) offers objects stored by any client, not only the creating client's own.
    /// Off by default: with it on, any client can learn whether anyone holds a file of which it knows the SHA-256
    /// and size (the status document's `possession` is set or null), `docs/RECEIVER.md` Dedup.
    public var dedupAcrossClients = false
    /// Most bytes the ranges of one spot check may add up to (advertised as `challenge-bytes`, `docs/PROTOCOL.md`
    /// 3.6): what one challenge request can make the receiver read.
    public var maximumChallengeBytes: Int64 = 16 << 20

    /// The defaults of `docs/PROTOCOL.md` section 2.
    public init(
        maximumObjectSize: Int64 = 1 << 40, minimumChunkSize: Int = 256 * 1024, maximumChunkSize: Int = 64 << 20,
        maximumChunks: Int = 1 << 20, maximumParallelChunks: Int = 16, maximumOpenUploadsPerClient: Int = 256,
        expirySeconds: Int64 = 86_400, maximumMetadataBytes: Int = 16 * 1024
    ) {
        self.maximumObjectSize = maximumObjectSize
        self.minimumChunkSize = minimumChunkSize
        self.maximumChunkSize = maximumChunkSize
        self.maximumChunks = maximumChunks
        self.maximumParallelChunks = maximumParallelChunks
        self.maximumOpenUploadsPerClient = maximumOpenUploadsPerClient
        self.expirySeconds = expirySeconds
        self.maximumMetadataBytes = maximumMetadataBytes
    }
}
