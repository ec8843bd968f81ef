import AetherIO
import AetherIntegrity
import AetherScheduling
import AetherTransport

/// A part ready to send.
struct PartToSend: Sendable {
    let index: Int
    let offset: Int64
    let body: HTTPRequestBody
    let length: Int64
    let sha256: Digest32
    let crc32c: UInt32
    let link: Digest32
    /// The backend variant that sends it (with or without compression, per the tier when it was read).
    let via: any UploadBackend
}

/// A part the destination acknowledged.
struct SentPart: Sendable {
    let receipt: PartReceipt
    let sha256: Digest32
    let crc32c: UInt32
    let seconds: Double
    let bytesOnWire: Int64
    var attempts = 1
    /// The bytes the scheduler measures at this acknowledgement (a run's total on its first part, 0 on the rest);
    /// nil: the part's own length.
    var measuredBytes: Int64?
}

/// The state of one transfer the uploader actor holds: the machine's bookkeeping and the owner's own resources
/// (the reader, the ledger, the progress layers, the parity group being read, the senders).
struct RunState {
    var machine: TransferStateMachine
    let knownHashes: [Int: Digest32]
    let parallelLimit: Int
    let reader: FileChunkReader
    let ledger: ChunkIntegrityLedger
    let tracker: ProgressLayers
    let started: Double
    let emit: @Sendable (UploadEvent) -> Void
    let variants: SendVariants
    /// The dedup pre-pass's digests of this file, when it ran: the send pass then hashes nothing again.
    var prePass: DedupDigest? = nil
    let hasher = ChunkHasher(probesCompressibility: false)
    var fileHash = SHA256()
    var nextIndex = 0
    var chunkHashes: [Digest32] = []
    /// Parity of the group being read: its data chunks (zero-padded), the shards it will get, and whether any of
    /// its chunks is sent in this run.
    var group: [[UInt8]] = []
    var groupShards = 0
    var groupHasNew = false
    var pendingParity: [ParityShard] = []
    /// The backend that sends runs and the most parts per run; nil when every request carries one part.
    let runSender: (any RunSendingBackend, Int)?
    /// Parts per request, for sends in flight (the machine's decision, shared with them).
    let runLength: RunLength

    var pendingParityIsEmpty: Bool { pendingParity.isEmpty }
}

/// The byte counters behind `UploadProgress`.
struct Counters {
    let total: Int64
    var sent: Int64
    var acknowledged: Int64
    var verified: Int64 = 0
    var runBytes: Int64 = 0
    let reused: Int64

    init(total: Int64, reused: Int64) {
        self.total = total
        self.reused = reused
        sent = reused
        acknowledged = reused
    }

    var runAcknowledged: Int64 { acknowledged - reused }

    func progress(_ sample: ProgressLayers.Snapshot, tier: NetworkSpeedTier) -> UploadProgress {
        UploadProgress(
            totalBytes: total, sentBytes: sent, acknowledgedBytes: acknowledged, verifiedBytes: verified,
            bytesPerSecond: sample.bytesPerSecond ?? 0, tier: tier, displayedFraction: sample.displayedFraction,
            secondsRemaining: sample.secondsRemaining)
    }
}
