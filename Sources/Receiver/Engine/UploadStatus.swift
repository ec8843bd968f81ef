/// Everything a status answer needs: the status document (`docs/PROTOCOL.md` 3.5), `HEAD` for IETF and tus,
/// and `Aether-Received`.
public struct UploadStatus: Sendable, Hashable {
    /// The upload as recorded.
    public var record: UploadRecord
    /// Native: one flag per chunk, stored (received or rebuilt) or not.
    public var received: [Bool]
    /// Native: one flag per parity shard, in group order (`group * parity + shard`).
    public var parityReceived: [Bool]
    /// Native: stored chunk count.
    public var storedChunks: Int
    /// Native: the contiguous stored prefix, in chunks.
    public var prefixChunks: Int
    /// The `Upload-Offset` to report: the stream's committed bytes, or for native the bytes of the stored
    /// prefix of chunks.
    public var offset: Int64
    /// Wall seconds (Unix) after which an idle upload is removed, nil once complete.
    public var expiresAt: Int64?
    /// A fresh proof-of-possession challenge (`PossessionChallenge.serialized`) when the upload's content id
    /// names a stored object (section 3.7); nil otherwise.
    public var possessionChallenge: [UInt8]?
    /// The receipt, once complete.
    public var receipt: UploadReceiptRecord?

    /// A status.
    public init(
        record: UploadRecord, received: [Bool], parityReceived: [Bool], storedChunks: Int, prefixChunks: Int,
        offset: Int64, expiresAt: Int64?, possessionChallenge: [UInt8]?, receipt: UploadReceiptRecord?
    ) {
        self.record = record
        self.received = received
        self.parityReceived = parityReceived
        self.storedChunks = storedChunks
        self.prefixChunks = prefixChunks
        self.offset = offset
        self.expiresAt = expiresAt
        self.possessionChallenge = possessionChallenge
        self.receipt = receipt
    }

    /// Whether the object is stored and visible (`Upload-Complete: ?1`).
    public var isComplete: Bool { record.state == .complete }

    /// A bitmap of `flags`: byte `i/8`, bit `i%8` least significant first, bits past the end zero.
    public static func bitmap(_ flags: [Bool]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: (flags.count + 7) / 8)
        for (index, flag) in flags.enumerated() where flag { bytes[index / 8] |= 1 << UInt8(index % 8) }
        return bytes
    }
}
