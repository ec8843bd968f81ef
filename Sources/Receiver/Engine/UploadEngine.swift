public import AetherIO
import AetherIntegrity
import AetherSecurity
import Synchronization

/// The receiver below HTTP: creates uploads, takes byte-stream appends (IETF, tus) and indexed chunks and parity
/// shards (native), verifies them, completes uploads into visible objects, answers challenges and possession
/// proofs, cancels, expires and recovers after a crash. Protocol-agnostic, synchronous and thread-safe: the HTTP
/// server calls it from its own threads.
///
/// Durability: an append or a chunk is acknowledged (its `finish()` returns) only after its bytes are fsync'ed
/// and the catalogue transaction that records them is committed. Objects become visible by one atomic rename.
public final class UploadEngine: Sendable {
    /// Where bytes live.
    public let blobs: any BlobStore
    /// Where facts live.
    public let catalog: any UploadCatalog
    /// What the receiver accepts.
    public let limits: ReceiverLimits
    let clock: any AetherClock
    let random: @Sendable (Int) -> [UInt8]
    let state = Mutex(EngineState())

    /// An engine over `blobs` and `catalog`. `random` gives CSPRNG bytes (upload ids); tests may inject one.
    public init(
        blobs: any BlobStore, catalog: any UploadCatalog, limits: ReceiverLimits = ReceiverLimits(),
        clock: any AetherClock = SystemClock(), random: @escaping @Sendable (Int) -> [UInt8] = SecureRandom.bytes
    ) {
        self.blobs = blobs
        self.catalog = catalog
        self.limits = limits
        self.clock = clock
        self.random = random
    }

    /// The embedded default: a `DirectoryBlobStore` at `directory` and a `SQLiteUploadCatalog` in
    /// `directory/catalog.sqlite3`.
    public convenience init(
        directory: FilePath, limits: ReceiverLimits = ReceiverLimits(), clock: any AetherClock = SystemClock()
    ) throws(ReceiverError) {
        let blobs = try DirectoryBlobStore(root: directory)
        let catalog = try SQLiteUploadCatalog(path: directory.appending("catalog.sqlite3"))
        self.init(blobs: blobs, catalog: catalog, limits: limits, clock: clock)
    }

    var now: Int64 { clock.wallWholeSeconds() }

    // MARK: Create

    /// Creates an upload for `owner` after checking `request` against the protocol's rules and the limits.
    public func create(_ request: NewUpload, owner: ClientIdentity) throws(ReceiverError) -> UploadRecord {
        try checkCommon(request, owner: owner)
        if case .final(let partials) = request.concatenation {
            return try concatenate(final: partials, owner: owner, metadata: request.metadata)
        }
        let created = now
        var record = UploadRecord(
            id: UploadID(randomBytes: random(16)), owner: owner, uploadProtocol: request.uploadProtocol,
            state: .open, size: request.size, chunkSize: 0, chunks: 0, chainSessionID: nil, contentID: nil,
            parity: nil, metadata: request.metadata, expectedSHA256: request.expectedSHA256,
            concatenation: request.concatenation, offset: 0, chainVerifiedThrough: -1, chainLink: nil,
            createdAt: created, updatedAt: created)
        if request.uploadProtocol == .native {
            let layout = try nativeLayout(request)
            record.chunkSize = layout.chunkSize
            record.chunks = layout.chunks
            record.chainSessionID = layout.session
            record.chainLink = ChunkCommitmentChain.genesis(sessionID: layout.session)
            record.contentID = request.contentID
            record.parity = request.parity
            // The file the chunks are written into in place (an orphan after a crash here is removed at start).
            try blobs.reserve(.stream(record.id), size: record.size ?? 0)
        }
        try catalog.insert(record)
        if record.uploadProtocol == .tus, record.size == 0 {
            // An empty tus upload is complete at creation: there is nothing to append.
            return try withGate(record.id) { () throws(ReceiverError) in
                try completeStream(record, runningDigest: SHA256().finalize()).record
            }
        }
        return record
    }

    private func checkCommon(_ request: NewUpload, owner: ClientIdentity) throws(ReceiverError) {
        if let size = request.size {
            guard size >= 0 else { throw ReceiverError(.malformedRequest, "the size is negative") }
            guard size <= limits.maximumObjectSize else {
                throw ReceiverError(.tooLarge, "the size is over the limit of \(limits.maximumObjectSize) bytes")
            }
        }
        var metadataBytes = 0
        for (key, value) in request.metadata {
            guard !key.isEmpty, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ",") }) else {
                throw ReceiverError(.malformedRequest, "a metadata key is not printable ASCII without space or comma")
            }
            metadataBytes += key.utf8.count + value.count
        }
        guard metadataBytes <= limits.maximumMetadataBytes else {
            throw ReceiverError(.tooLarge, "the metadata is over the limit of \(limits.maximumMetadataBytes) bytes")
        }
        if request.concatenation != nil, request.uploadProtocol != .tus {
            throw ReceiverError(.malformedRequest, "only tus uploads are concatenated")
        }
        guard try catalog.openUploadCount(owner: owner) < limits.maximumOpenUploadsPerClient else {
            throw ReceiverError(
                .tooManyRequests, "this client holds \(limits.maximumOpenUploadsPerClient) open uploads already")
        }
    }

    /// The smallest native chunk taken (the `min-chunk` advertised): the limit, raised to the blob store's own floor
    /// (`BlobStore.minimumChunkSize`, a fleet's S3 part floor), never above the largest chunk.
    public var minimumChunkSize: Int {
        let granule = ReceiverLimits.chunkGranularity
        let floor = (blobs.minimumChunkSize + granule - 1) / granule * granule
        return min(max(limits.minimumChunkSize, floor), limits.maximumChunkSize)
    }

    /// The native creation's chunk size: given, a multiple of 16 KiB, within the limits.
    func checkedChunkSize(_ request: NewUpload) throws(ReceiverError) -> Int {
        guard let chunkSize = request.chunkSize else {
            throw ReceiverError(.malformedRequest, "a native upload needs size, chunkSize and chunks")
        }
        guard chunkSize >= minimumChunkSize, chunkSize <= limits.maximumChunkSize,
            chunkSize % ReceiverLimits.chunkGranularity == 0
        else {
            throw ReceiverError(
                .malformedRequest,
                "chunkSize must be a multiple of 16 KiB from \(minimumChunkSize) to \(limits.maximumChunkSize)")
        }
        return chunkSize
    }

    private func nativeLayout(_ request: NewUpload) throws(ReceiverError) -> (
        chunkSize: Int, chunks: Int, session: String
    ) {
        if request.size == nil, request.chunks == nil { return try deferredNativeLayout(request) }
        guard let size = request.size, let chunks = request.chunks else {
            throw ReceiverError(.malformedRequest, "a native upload needs size, chunkSize and chunks")
        }
        let chunkSize = try checkedChunkSize(request)
        let expected = size == 0 ? 1 : Int((size + Int64(chunkSize) - 1) / Int64(chunkSize))
        guard chunks == expected else {
            throw ReceiverError(.malformedRequest, "chunks is \(chunks), the size and chunk size give \(expected)")
        }
        guard chunks <= limits.maximumChunks else {
            throw ReceiverError(.tooLarge, "\(chunks) chunks are over the limit of \(limits.maximumChunks)")
        }
        guard let session = request.chainSessionID, (1...256).contains(session.utf8.count) else {
            throw ReceiverError(.malformedRequest, "chainSessionID must be 1 to 256 UTF-8 bytes")
        }
        if let contentID = request.contentID {
            guard (try? ACI(parsing: contentID)) != nil else {
                throw ReceiverError(.malformedRequest, "contentID is not an ACI (aci:1:sha256:<hex>)")
            }
        }
        if let parity = request.parity {
            guard (1...255).contains(parity.data), (1...255).contains(parity.parity), parity.data + parity.parity <= 256
            else { throw ReceiverError(.malformedRequest, "parity needs data and parity in 1...255, at most 256") }
        }
        return (chunkSize, chunks, session)
    }

    // MARK: Status

    /// The upload's status for its owner. An idle upload past its expiry is expired first; one with a request
    /// writing into it is not idle.
    public func status(_ id: UploadID, owner: ClientIdentity) throws(ReceiverError) -> UploadStatus {
        var record = try load(id, owner: owner, allowing: [.open, .complete, .failed])
        if try expireIfIdle(record) {
            record = try load(id, owner: owner, allowing: [.open, .complete, .failed])
        }
        var received: [Bool] = []
        var parityReceived: [Bool] = []
        var stored = 0
        var prefix = 0
        var offset = record.offset
        if record.uploadProtocol == .native {
            received = [Bool](repeating: false, count: try receivedExtent(record))
            if record.state == .complete {
                received = [Bool](repeating: true, count: record.chunks)
            } else {
                for receipt in try catalog.chunkReceipts(id) where receipt.index < received.count {
                    received[receipt.index] = true
                }
            }
            stored = received.count { $0 }
            prefix = received.firstIndex(of: false) ?? received.count
            offset = record.state == .complete ? (record.size ?? 0) : Int64(prefix) * Int64(record.chunkSize)
            if let parity = record.parity {
                parityReceived = [Bool](
                    repeating: false, count: parity.groupCount(chunks: record.chunks) * parity.parity)
                if record.state != .complete {
                    for receipt in try catalog.parityReceipts(id) where receipt.index < parityReceived.count {
                        parityReceived[receipt.index] = true
                    }
                }
            }
        }
        let receipt = record.state == .complete ? try catalog.receipt(id) : nil
        let challenge = record.state == .open ? try possessionChallenge(for: record) : nil
        return UploadStatus(
            record: record, received: received, parityReceived: parityReceived, storedChunks: stored,
            prefixChunks: prefix, offset: offset,
            expiresAt: record.state == .complete
                ? nil : max(record.updatedAt, lastActivity(id) ?? record.updatedAt) + limits.expirySeconds,
            possessionChallenge: challenge, receipt: receipt)
    }

    // MARK: Shared helpers

    /// The upload `id` for `owner`, in one of `states`; otherwise the error a request about it gets. Another
    /// client's upload is `.notFound` with the message of an unknown id, checked before its state: nothing in the
    /// answer tells whether the id exists.
    func load(_ id: UploadID, owner: ClientIdentity, allowing states: Set<UploadState>) throws(ReceiverError)
        -> UploadRecord
    {
        guard let record = try catalog.record(id), record.owner == owner else { throw Self.unknownUpload }
        guard states.contains(record.state) else { throw Self.stateError(record) }
        return record
    }

    /// The answer about an id that does not exist, or exists for another client.
    static var unknownUpload: ReceiverError { ReceiverError(.notFound, "no upload has this id") }

    /// The error for a request that the upload's state does not allow.
    static func stateError(_ record: UploadRecord) -> ReceiverError {
        switch record.state {
        case .expired: ReceiverError(.expired, "the upload expired or was cancelled")
        case .complete: ReceiverError(.alreadyComplete, "the upload is complete")
        case .open: ReceiverError(.malformedRequest, "the upload is still open")
        case .failed:
            if let failure = record.failure, failure.hasPrefix(ReceiverError.Code.chainBroken.name) {
                ReceiverError(.chainBroken, "the upload failed: \(failure)")
            } else if let failure = record.failure, failure.hasPrefix(ReceiverError.Code.digestMismatch.name) {
                ReceiverError(.digestMismatch, "the upload failed: \(failure)")
            } else {
                ReceiverError(.expired, "the upload failed: \(record.failure ?? "no reason recorded")")
            }
        }
    }

    /// Runs `body` holding the upload's gate: every change of one upload's catalogue state is serialized, in this
    /// process by the gate and across receivers sharing the catalogue by `catalog.serialized`. A gate lives while a
    /// request holds or waits for it, so the map holds only uploads being changed right now.
    func withGate<T>(_ id: UploadID, _ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        let gate = state.withLock { $0.enterGate(id) }
        defer { state.withLock { $0.leaveGate(id) } }
        var outcome: Result<T, ReceiverError>?
        gate.lock.withLock { _ in
            do throws(ReceiverError) { outcome = .success(try catalog.serialized(id, body)) } catch {
                outcome = .failure(error)
            }
        }
        guard let outcome else { throw ReceiverError(.storageFailed, "the upload's gate ran nothing") }
        return try outcome.get()
    }

    /// How many uploads have a gate in memory (tests check that the map is pruned).
    package var gateCount: Int { state.withLock { $0.gates.count } }
}

/// The engine's in-memory state: per-upload gates, requests writing into uploads, possession verifiers.
struct EngineState {
    /// Each gate with the number of requests holding or waiting for it; removed when that reaches zero.
    var gates: [UploadID: (gate: UploadGate, users: Int)] = [:]
    var possession: [UploadID: PossessionEntry] = [:]
    /// Claimed write regions, one request each (`claimRegion`): native chunks written in place, and the byte
    /// stream of an IETF or tus upload (one append at a time).
    var claimedRegions: [ChunkRegion: ClaimToken] = [:]
    /// Native uploads' whole-object hashes, fed as their stored prefix grows (`advanceWholeHash`).
    var wholeHashes: [UploadID: WholeHash] = [:]
    /// Uploads whose whole-object hash a request is feeding now; true when another commit asked it to look again.
    var wholeHashFeeders: [UploadID: Bool] = [:]
    /// Requests writing into each upload and when the last one ended (`UploadEngine+Activity.swift`).
    var activity: [UploadID: UploadActivity] = [:]
    /// Uploads being expired right now: no request may start writing into them.
    var retiring: Set<UploadID> = []
    /// Received prefixes of cut native chunks (`ChunkPartials.swift`).
    var partials = PartialTable()

    mutating func enterGate(_ id: UploadID) -> UploadGate {
        if let entry = gates[id] {
            gates[id] = (entry.gate, entry.users + 1)
            return entry.gate
        }
        let gate = UploadGate()
        gates[id] = (gate, 1)
        return gate
    }

    mutating func leaveGate(_ id: UploadID) {
        guard let entry = gates[id] else { return }
        gates[id] = entry.users > 1 ? (entry.gate, entry.users - 1) : nil
    }
}

/// The lock that serializes changes to one upload.
final class UploadGate: Sendable {
    let lock = Mutex(())
}

/// A possession check in flight: the verifier over the stored object (its claim from the object's kept Merkle root)
/// and the dedup index entry it came from.
struct PossessionEntry: Sendable {
    let verifier: ProofOfPossessionVerifier
    let object: StoredObject
}
