import AetherIO
import AetherIntegrity
import Synchronization

@testable import AetherTransport
@testable import AetherUploader

/// An `UploadBackend` in memory for the uploader's tests: stores parts by index, and can fail sends, delay them
/// (so parts finish out of order), store a part but lose its acknowledgement, and lie in its receipt or chain.
final class InMemoryBackend: ChainReportingBackend {
    struct Upload {
        var size: Int64
        var partSize: Int64
        var sessionID: String
        var parts: [Int: [UInt8]] = [:]
        var completed = false
    }

    struct State {
        var uploads: [String: Upload] = [:]
        var created = 0
        var aborted: [String] = []
        /// Codes the next sends throw, in order, before storing anything.
        var failures: [TransportError.Code] = []
        /// Failures the next resume queries (`progress`) throw, in order.
        var progressFailures: [TransportError.Code] = []
        /// Indices whose next send is stored but answered with `.connectionClosed` (a lost acknowledgement).
        var dropAcknowledgement: Set<Int> = []
        /// Every send attempt, by part index.
        var sends: [Int] = []
        /// The `Idempotency-Key` of every send attempt.
        var idempotencyKeys: [String?] = []
        var lieInReceipt = false
        var lieInChain = false
        /// Whether `chainState` answers (false: as a destination that keeps no chain).
        var reportsChain = true
        /// When set, `progress` lists the stored parts as S3 ListParts does, each with its CRC32C, or the one given
        /// here for its index (a destination that reports holding other bytes).
        var listsPartsWithCRC: [Int: UInt32]?
    }

    let state = Mutex(State())
    let capabilities: BackendCapabilities
    var features: BackendFeatures { BackendFeatures(chain: self) }
    /// Called after each stored part with the number stored so far in that upload.
    let onStored: @Sendable (Int) -> Void
    let reorder: Bool

    init(
        parallel: Bool = true, reorder: Bool = true, minimumPartSize: Int64 = 1,
        onStored: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        capabilities = BackendCapabilities(
            minimumPartSize: minimumPartSize, maximumPartSize: 64 << 20, maximumParts: 10_000, equalParts: false,
            parallelParts: parallel, outOfOrderParts: parallel, checksums: [.sha256], resumeQuery: .chunkBitmap,
            maximumObjectSize: 1 << 40)
        self.onStored = onStored
        self.reorder = reorder
    }

    func create(_ description: UploadDescription) async throws(TransportError) -> RemoteUpload {
        let location = state.withLock { state in
            state.created += 1
            let location = "memory://upload/\(state.created)"
            state.uploads[location] = Upload(
                size: description.size, partSize: description.layout.partSize,
                sessionID: description.chainSessionID)
            return location
        }
        return RemoteUpload(
            location: location, uploadID: nil, size: description.size, partSize: description.layout.partSize)
    }

    func progress(of upload: RemoteUpload) async throws(TransportError) -> RemoteProgress {
        let answer: Result<RemoteProgress, TransportError> = state.withLock { state in
            if !state.progressFailures.isEmpty {
                return .failure(TransportError(state.progressFailures.removeFirst(), "injected failure"))
            }
            guard let stored = state.uploads[upload.location] else { return .success(.gone) }
            if let reported = state.listsPartsWithCRC {
                return .success(
                    .parts(
                        stored.parts.keys.sorted().map { index in
                            let bytes = stored.parts[index] ?? []
                            return PartReceipt(
                                index: index, length: Int64(bytes.count),
                                checksumCRC32C: reported[index] ?? CRC32C.checksum(bytes))
                        }))
            }
            return .success(.chunks(Set(stored.parts.keys), complete: stored.completed))
        }
        return try answer.get()
    }

    static func bytes(of body: HTTPRequestBody) -> [UInt8] {
        switch body.storage {
        case .none: return []
        case .stream: return []
        case .pieces(let pieces, _):
            var bytes: [UInt8] = []
            for piece in pieces {
                switch piece {
                case .bytes(let more): bytes += more
                case .chunk(let chunk): bytes += chunk.bytes
                }
            }
            return bytes
        }
    }

    func send(_ part: UploadPart, to upload: RemoteUpload) async throws(TransportError) -> PartReceipt {
        if reorder {
            try? await Task.sleep(for: .milliseconds(Int.random(in: 0...3)))
        }
        let bytes = Self.bytes(of: part.body)
        enum Outcome {
            case fail(TransportError.Code), stored(Int, dropped: Bool), gone
        }
        let outcome: Outcome = state.withLock { state in
            state.sends.append(part.index)
            state.idempotencyKeys.append(part.idempotencyKey)
            if !state.failures.isEmpty { return .fail(state.failures.removeFirst()) }
            guard state.uploads[upload.location] != nil else { return .gone }
            state.uploads[upload.location]?.parts[part.index] = bytes
            let dropped = state.dropAcknowledgement.remove(part.index) != nil
            return .stored(state.uploads[upload.location]?.parts.count ?? 0, dropped: dropped)
        }
        switch outcome {
        case .fail(let code): throw TransportError(code, "injected failure")
        case .gone: throw TransportError(.gone, "no such upload")
        case .stored(let count, let dropped):
            guard SHA256.hash(bytes) == part.sha256, bytes.count == part.length else {
                throw TransportError(.checksumMismatch, "part \(part.index) digest mismatch")
            }
            onStored(count)
            if dropped { throw TransportError(.connectionClosed, "acknowledgement lost") }
            return PartReceipt(index: part.index, length: part.length)
        }
    }

    /// The stored object of `location`, parts in index order.
    func object(_ location: String) -> [UInt8]? {
        state.withLock { state in
            guard let upload = state.uploads[location] else { return nil }
            return upload.parts.keys.sorted().flatMap { upload.parts[$0] ?? [] }
        }
    }

    func complete(_ upload: RemoteUpload, summary: CompletionSummary) async throws(TransportError) -> UploadReceipt {
        let (stored, lie, sessionID) = state.withLock { state in
            state.uploads[upload.location]?.completed = true
            return (state.uploads[upload.location], state.lieInReceipt, state.uploads[upload.location]?.sessionID)
        }
        guard let stored, let sessionID else { throw TransportError(.gone, "no such upload") }
        let count = stored.size == 0 ? 1 : Int((stored.size + stored.partSize - 1) / stored.partSize)
        var tree = StreamingMerkleTree()
        var chain = try? ChunkCommitmentChain(sessionID: sessionID, plannedChunkCount: count)
        var whole = SHA256()
        for index in 0..<count {
            guard let bytes = stored.parts[index] else { throw TransportError(.conflict, "part \(index) missing") }
            let digest = SHA256.hash(bytes)
            _ = try? tree.append(digest)
            _ = chain?.append(digest)
            whole.update(bytes)
        }
        var sha = whole.finalize()
        if lie { sha = SHA256.hash(Array("not the file".utf8)) }
        return UploadReceipt(
            location: upload.location, size: stored.size, serverSHA256: sha, serverMerkleRoot: tree.root,
            serverChainHead: chain?.head)
    }

    func abort(_ upload: RemoteUpload) async throws(TransportError) {
        state.withLock { state in
            state.uploads[upload.location] = nil
            state.aborted.append(upload.location)
        }
    }

    func chainState(of upload: RemoteUpload) async throws(TransportError) -> ChainState? {
        let (stored, lie, reports) = state.withLock {
            ($0.uploads[upload.location], $0.lieInChain, $0.reportsChain)
        }
        guard let stored, reports else { return nil }
        let count = stored.size == 0 ? 1 : Int((stored.size + stored.partSize - 1) / stored.partSize)
        guard var chain = try? ChunkCommitmentChain(sessionID: stored.sessionID, plannedChunkCount: count) else {
            return nil
        }
        var prefix = 0
        while let bytes = stored.parts[prefix] {
            var digest = SHA256.hash(bytes)
            if lie { digest = SHA256.hash(bytes + [1]) }
            _ = chain.append(digest)
            prefix += 1
        }
        return ChainState(count: prefix, head: chain.head)
    }
}
