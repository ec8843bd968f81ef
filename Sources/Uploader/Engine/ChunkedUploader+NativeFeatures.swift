import AetherCoding
import AetherIO
import AetherIntegrity
import AetherScheduling
import AetherSecurity
import AetherTransport
import Synchronization

/// The native variants of one run: the backend variants that send chunks (with and without compression) and
/// parity shards, and the parity scheme the upload was created with.
struct SendVariants: Sendable {
    /// Sends chunks without a content coding (the ULTRAFAST tier, or when compression is off).
    let plain: any UploadBackend
    /// Sends chunks that may travel compressed (the probe in `NativeBackend` decides per chunk), if allowed.
    let compressing: (any UploadBackend)?
    /// Sends parity shards, when the upload has a parity scheme.
    let parity: (any NativeFeaturesBackend)?
    /// The scheme announced at creation.
    let scheme: ParityScheme?
}

/// What the send loop does next.
enum PlannedRequest: Sendable {
    case part(PartToSend)
    case parity(ParityShard, any NativeFeaturesBackend)
    /// Consecutive parts in one request.
    case run([PartToSend], any RunSendingBackend)
}

/// What a finished send reports.
enum AnsweredRequest: Sendable {
    case part(SentPart)
    case parity(bytesOnWire: Int64)
    case run([SentPart])
}

/// The whole file digested before creation (dedup): what the possession proof and the completion need.
struct DedupDigest: Sendable {
    let sha256: Digest32
    let chunkHashes: [Digest32]
    let merkleRoot: Digest32
    let chainHead: Digest32
    let parts: [PartReceipt]
    /// The file as the pre-pass read it: the send pass reuses these digests only for the same file.
    let identity: FileIdentity
}

extension ChunkedUploader {
    /// Data chunks per parity group (the last group may hold fewer; it is coded as if zero chunks filled it).
    static let parityGroupSize = 8

    // MARK: Backend variants

    /// The backend with `parity` announced and chunks allowed to travel in `compression`; the backend itself when it
    /// speaks no native variants.
    func sender(parity: ParityScheme?, compression: ContentCoding?) throws(UploaderError) -> any UploadBackend {
        guard let native = backend.features.native else { return backend }
        var options = native.options
        options.parity = parity
        options.compression = compression
        do {
            return try native.with(options: options)
        } catch {
            throw UploaderError(.invalidArgument, "the native options are refused: \(error.message)")
        }
    }

    /// The variant for the next chunk: compressing when the tier allows it (never ULTRAFAST).
    static func sender(for run: RunState) -> any UploadBackend {
        if let compressing = run.variants.compressing, run.machine.decision.resourceLevel < .heavy,
            run.machine.decision.tier.strategy(availableMemoryBytes: nil).compressionEnabled
        {
            return compressing
        }
        return run.variants.plain
    }

    /// The coding chunks may travel in: zstd, else deflate, when the flag is on and the receiver takes it.
    func compressionCoding() -> ContentCoding? {
        guard configuration.flags.compression, let native = backend.features.native else { return nil }
        return [ContentCoding.zstd, .deflate].first { native.server.encodings.contains($0) }
    }

    /// The parity scheme announced at creation: when the flag is on, the receiver takes `rs8`, and `--parity` forces
    /// it or the tier codes (not FAST or ULTRAFAST). Groups of up to 8 chunks; the parity count is the binomial one
    /// for the scheduler's prior loss rate (`SchedulingContext.failureProbability`), at least 1. Shards are only
    /// sent for a group when `--parity` forces them or the measured loss asks for them (`paritySharesForNextGroup`).
    func paritySchemeAtCreation(decision: SchedulingDecision, size: Int64, partCount: Int) -> ParityScheme? {
        guard configuration.flags.parity, size > 0, let native = backend.features.native,
            native.server.parityCodes.contains("rs8"),
            configuration.parity || decision.strategy.erasureCodingEnabled
        else { return nil }
        let data = min(Self.parityGroupSize, partCount)
        var parity = 1
        do {
            if let m = try AdaptiveRedundancy.parityShards(
                dataShards: data, lossRate: SchedulingContext().failureProbability, maximumTotalShards: 256)
            {
                parity = max(1, m)
            } else {
                parity = 256 - data
            }
        } catch {
            // Unreachable for data in 1...8 and the context's prior in [0, 1]; one shard still protects a group.
            parity = 1
        }
        return ParityScheme(data: data, parity: min(parity, 256 - data))
    }

    /// The variants of this run. A resumed upload takes its parity scheme from the receiver's status document (the
    /// snapshot does not record it); without the status, this run sends no parity.
    func sendVariants(snapshot: ResumeSnapshot, fresh: Bool, scheme created: ParityScheme?) async -> SendVariants {
        guard let native = backend.features.native else {
            return SendVariants(plain: backend, compressing: nil, parity: nil, scheme: nil)
        }
        var scheme = created
        if !fresh, configuration.flags.parity {
            do {
                scheme = try await native.status(of: snapshot.remote).parity?.scheme
            } catch {
                // Parity only adds protection: a receiver that does not answer here gets none from this run.
                scheme = nil
            }
        }
        do {
            let plain = try sender(parity: scheme, compression: nil)
            let compressing = try compressionCoding().map { coding throws(UploaderError) in
                try sender(parity: scheme, compression: coding)
            }
            return SendVariants(
                plain: plain, compressing: compressing, parity: scheme == nil ? nil : plain.features.native,
                scheme: scheme)
        } catch {
            return SendVariants(plain: backend, compressing: nil, parity: nil, scheme: nil)
        }
    }

    // MARK: Parity

    /// Parity shards waiting, then the next part, then the last group's shards.
    func nextPartOrParity() throws -> PlannedRequest? {
        if let shard = popParity() { return shard }
        if let part = try nextPart() { return .part(part) }
        return popParity()
    }

    private func popParity() -> PlannedRequest? {
        guard var run = state, !run.pendingParity.isEmpty, let via = run.variants.parity else { return nil }
        let shard = run.pendingParity.removeFirst()
        state = run
        return .parity(shard, via)
    }

    /// How many parity shards the group starting now gets: all of the scheme's when `--parity` forces them,
    /// else what AdaptiveRedundancy asks for at the loss rate measured so far in this run (none before any loss,
    /// none on ULTRAFAST), capped by the scheme. Interruptions of the path are not loss (`RetryPolicy.answeredFailures`).
    func parityShardsForNextGroup(_ run: RunState) -> Int {
        guard let scheme = run.variants.scheme else { return 0 }
        if configuration.parity { return scheme.parity }
        let failures = retries.answeredFailures.load(ordering: .relaxed)
        guard run.machine.decision.tier != .ultrafast, run.machine.attempts > 0, failures > 0 else { return 0 }
        let loss = min(1, Double(failures) / Double(run.machine.attempts))
        do {
            switch try AdaptiveRedundancy.decide(dataShards: scheme.data, lossRate: loss, ultrafastLink: false) {
            case .none: return 0
            case .reedSolomon(_, let m): return min(m, scheme.parity)
            case .fountain: return scheme.parity
            }
        } catch {
            return 0  // unreachable: data is 1...255 and the loss in [0, 1]
        }
    }

    /// Adds `chunk` to its group; when the group is whole (or the last chunk is read), encodes its parity with
    /// rs8 (`docs/ERASURE-CODING.md`, the receiver's code) and queues the shards. Only the group's buffers are
    /// held: its data chunks, zero-padded to the chunk size, and the shards it gets.
    func collectParity(_ run: inout RunState, chunk: Chunk, isNew: Bool) throws(UploaderError) {
        guard let scheme = run.variants.scheme, run.variants.parity != nil else { return }
        let size = Int(run.machine.snapshot.partSize)
        let position = chunk.index % scheme.data
        if position == 0 {
            run.group = []
            run.groupHasNew = false
            run.groupShards = parityShardsForNextGroup(run)
        }
        guard run.groupShards > 0, run.group.count == position else { return }
        var bytes = chunk.bytes
        if bytes.count < size { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
        run.group.append(bytes)
        if isNew { run.groupHasNew = true }
        guard position == scheme.data - 1 || chunk.index == run.machine.snapshot.partCount - 1 else { return }
        // The short last group: positions past the last chunk are all-zero shards both sides know (PROTOCOL 3.3).
        while run.group.count < scheme.data { run.group.append([UInt8](repeating: 0, count: size)) }
        defer { run.group = [] }
        guard run.groupHasNew else { return }
        // Parity row s of the Cauchy matrix depends only on s, so RS(k, shards) gives the scheme's first shards.
        let shards: [[UInt8]]
        do {
            shards = try ReedSolomonCode(dataShards: scheme.data, parityShards: run.groupShards, field: .gf256)
                .encode(run.group)
        } catch {
            throw UploaderError(.integrityFailed, "parity encoding failed: \(error.message)")
        }
        let group = chunk.index / scheme.data
        for (index, bytes) in shards.enumerated() {
            run.pendingParity.append(
                ParityShard(
                    group: group, shard: index, body: .bytes(bytes), length: Int64(size), sha256: SHA256.hash(bytes),
                    crc32c: CRC32C.checksum(bytes)))
        }
    }

    /// Sends one parity shard with retries.
    nonisolated func sendParity(
        _ shard: ParityShard, via sender: any NativeFeaturesBackend, to remote: RemoteUpload,
        emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> AnsweredRequest {
        if let pacer { try await pacer.admit(shard.length) }
        let unsent = UnsentAttempts()
        let (_, attempts) = try await withRetries(index: -1, emit: emit) { () async throws(TransportError) in
            try await unsent.counting { () async throws(TransportError) in try await sender.send(shard, to: remote) }
        }
        return .parity(bytesOnWire: Int64(max(1, attempts - unsent.value)) * shard.length)
    }

    // MARK: Dedup

    /// With the dedup flag and a receiver that offers possession: the whole file digested first (chunk hashes,
    /// Merkle root, chain head, SHA-256), for the content id and the possession proof. Nil otherwise.
    func digestFirstForDedup(layout: PartLayout, sessionID: String) throws(UploaderError) -> DedupDigest? {
        guard configuration.flags.dedup, layout.objectSize > 0, layout.partSize <= Int64(UInt32.max),
            let native = backend.features.native, native.server.possession
        else { return nil }
        let reader: FileChunkReader
        do {
            reader = try FileChunkReader(
                path: target.file, options: ChunkReadOptions(chunkSize: Int(layout.partSize), heldChunks: 1))
        } catch {
            throw Self.readError(error)
        }
        let ledger = try Self.ledger(sessionID: sessionID, count: layout.partCount)
        let hasher = ChunkHasher(probesCompressibility: false)
        var file = SHA256()
        var hashes: [Digest32] = []
        var parts: [PartReceipt] = []
        while let chunk = try Self.next(reader) {
            try Task.checkCancellationAsUploaderError()
            let digest = Self.twoLaneDigest(chunk, hasher: hasher, file: &file)
            _ = try Self.append(ledger, digest.sha256)
            hashes.append(digest.sha256)
            parts.append(PartReceipt(index: chunk.index, length: Int64(chunk.count), checksumCRC32C: digest.crc32c))
        }
        guard hashes.count == layout.partCount, reader.identity.size == layout.objectSize else {
            throw UploaderError(.fileChanged, "\(target.file) changed while it was digested")
        }
        let summary = ledger.summary
        return DedupDigest(
            sha256: file.finalize(), chunkHashes: hashes, merkleRoot: summary.merkleRoot,
            chainHead: summary.chainHead, parts: parts, identity: reader.identity)
    }

    /// Answers the receiver's possession challenge from the local file. A passed check completes the upload
    /// with no chunk sent (the receipt is checked against the digest); a failed one returns nil and the chunks are
    /// sent. A receipt that differs from the digest is `.verificationFailed`.
    func deduplicated(
        _ native: any NativeFeaturesBackend, remote: RemoteUpload, challenge: [UInt8], digest: DedupDigest,
        snapshot: ResumeSnapshot, plan: ResumePlan, tier: NetworkSpeedTier,
        emit: @escaping @Sendable (UploadEvent) -> Void
    ) async throws -> UploadOutcome? {
        let prover: ProofOfPossessionProver
        do {
            prover = try ProofOfPossessionProver(
                source: try FilePossessionSource(path: target.file), chunkSize: UInt32(snapshot.partSize),
                chunkHashes: digest.chunkHashes)
        } catch {
            return nil  // the file cannot be proven (changed or unreadable): send the chunks, which checks it again
        }
        let summary = CompletionSummary(
            parts: digest.parts, fileSHA256: digest.sha256, merkleRoot: digest.merkleRoot, chainHead: digest.chainHead)
        let receipt: UploadReceipt?
        do {
            receipt = try await native.provePossession(
                remote, challenge: challenge, prover: prover, summary: summary)
        } catch {
            if error.code == .cancelled || Task.isCancelled { throw CancellationError() }
            if error.code == .receiptMismatch {
                throw UploaderError(
                    .verificationFailed, "the destination's dedup receipt does not match the file: \(error.message)")
            }
            // The answer may be what was lost (a reset or a timeout after the receiver took the proof): the upload is
            // then complete, and completing it again returns its receipt. Otherwise dedup, a shortcut, gives way to
            // sending the chunks.
            receipt = try await completedByLostProof(native, remote: remote, summary: summary)
        }
        guard let receipt else { return nil }
        try await resume.remove()
        let size = snapshot.remote.size
        let report = ResumeReport(level: plan.level, reusedParts: 0, reusedBytes: 0, reason: plan.reason)
        emit(.resume(report))
        let tracker = ProgressLayers(totalBytes: UInt64(size), clock: clock)
        _ = tracker.wireSent(UInt64(size))
        _ = tracker.acknowledged(UInt64(size), merkleVerified: true)
        var counters = Counters(total: size, reused: size)
        counters.verified = size
        emit(.progress(counters.progress(tracker.sample(), tier: tier)))
        telemetry?.audit(.started)
        telemetry?.audit(.verified)
        telemetry?.audit(.completed)
        telemetry?.finish(completed: true, resumed: false, totalBytes: UInt64(size), seconds: 0)
        let outcome = UploadOutcome(
            receipt: receipt, sha256: digest.sha256, merkleRoot: digest.merkleRoot, chainHead: digest.chainHead,
            serverVerified: ["possession", "sha256", "merkle-root", "chain-head"], partsSent: 0, bytesSent: 0,
            partCount: snapshot.partCount, resume: report)
        emit(.completed(outcome))
        return outcome
    }
}

extension ChunkedUploader {
    /// The receipt of an upload a possession proof completed although its answer did not arrive: completion is
    /// idempotent, so asking it returns the receipt, checked against `summary` as the proof's would have been (a
    /// mismatch is `.verificationFailed`). Nil while the upload is still open: the receiver answers that every
    /// chunk is missing (409), nothing changes there, and the chunks are sent.
    func completedByLostProof(_ native: any NativeFeaturesBackend, remote: RemoteUpload, summary: CompletionSummary)
        async throws -> UploadReceipt?
    {
        do {
            return try await native.complete(remote, summary: summary)
        } catch {
            if error.code == .cancelled || Task.isCancelled { throw CancellationError() }
            if error.code == .receiptMismatch {
                throw UploaderError(
                    .verificationFailed, "the destination's dedup receipt does not match the file: \(error.message)")
            }
            return nil
        }
    }
}

extension Task where Success == Never, Failure == Never {
    /// `checkCancellation` as the uploader's typed error.
    static func checkCancellationAsUploaderError() throws(UploaderError) {
        if isCancelled { throw UploaderError(.cancelled, "the upload was paused; its state is kept for a resume") }
    }
}
