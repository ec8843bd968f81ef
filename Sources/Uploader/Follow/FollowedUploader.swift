public import AetherIO
import AetherIntegrity
import AetherScheduling
import AetherSecurity
public import AetherTransport

/// Uploads a file that another process is still writing (`aether upload --follow`): the length is unknown until
/// the writer is done. The upload is created without a size (`UploadDescription.sizeDeferred`: native
/// `"size":null`, IETF without `Upload-Length`, S3 multipart, tus `Upload-Defer-Length` where offered); each part
/// is read once it is whole in the file, hashed (SHA-256, CRC32C), added to the Merkle tree and commitment chain,
/// and sent as usual with a fresh `Idempotency-Key`; the snapshot is saved after each acknowledgement. At the
/// current end the follower sleeps until inotify or the next look shows growth. The writer is done when the
/// caller's `FollowEnd` is finished, or when no process holds the file open for writing and it has not grown for
/// `FollowOptions.idleSeconds`; then the short last part is sent and the completion gives the final size.
///
/// A file that shrinks (`.fileTruncated`) or is replaced (`.fileReplaced`) while followed stops the upload;
/// nothing is completed. Parity, dedup and Byzantine sampling need the whole file and are not used.
///
/// Resume: the same command finds the snapshot (same key as a plain upload of the file to the destination). The
/// file may have grown since: every part sent before is read again and its SHA-256 compared with the snapshot's
/// (a difference abandons the old remote upload and starts fresh, once), and only parts the destination still
/// holds (its bitmap, offset or part list) are skipped.
public actor FollowedUploader {
    let target: ChunkedUploader.Target
    let backend: any UploadBackend
    let snapshots: any SnapshotStore
    let snapshotKey: String
    let configuration: UploadConfiguration
    let options: FollowOptions
    let clock: any AetherClock
    let telemetry: TelemetryRecorder?
    /// Retries, backoff and the circuit breaker for every request (the same policy a plain upload uses).
    let retries: RetryPolicy
    /// The upload's lock when the caller took it; else `run` takes it from the snapshot store.
    let heldLock: UploadLock?
    var run: FollowRun?

    /// A follower of `target.file` into `backend`, keeping its snapshot under `snapshotKey`.
    public init(
        target: ChunkedUploader.Target, backend: any UploadBackend, snapshots: any SnapshotStore, snapshotKey: String,
        configuration: UploadConfiguration = UploadConfiguration(), options: FollowOptions = FollowOptions(),
        clock: any AetherClock = SystemClock(), telemetry: TelemetryRecorder? = nil, heldLock: UploadLock? = nil
    ) {
        self.heldLock = heldLock
        self.target = target
        self.backend = backend
        self.snapshots = snapshots
        self.snapshotKey = snapshotKey
        self.configuration = configuration
        self.options = options
        self.clock = clock
        self.telemetry = telemetry
        retries = RetryPolicy(configuration: configuration)
    }

    /// Follows the file until the writer is done, then completes; returns the outcome (also sent as `.completed`).
    /// The upload's lock is held throughout, as `ChunkedUploader.run` holds it.
    public func run(_ emit: @escaping @Sendable (UploadEvent) -> Void) async throws(UploaderError) -> UploadOutcome {
        try configuration.validate()
        try options.validate()
        let lock = try heldLock == nil ? snapshots.lock(key: snapshotKey) : nil
        defer { withExtendedLifetime(lock) {} }
        let file = try FollowedFile(path: target.file)
        defer { file.close() }
        var forceFresh: String?
        while true {
            do {
                return try await follow(file, forceFresh: forceFresh, emit: emit)
            } catch let mismatch as FollowMismatch {
                guard forceFresh == nil else {
                    throw UploaderError(.fileChanged, "\(target.file) keeps changing where it was already sent")
                }
                try? await backend.abort(mismatch.remote)
                forceFresh = "part \(mismatch.index) differs from the earlier run (the file changed); starting fresh"
            } catch {
                let failure = ChunkedUploader.runFailure(error, telemetry: telemetry)
                if failure.code == .verificationFailed {
                    await ResumePlanner(store: snapshots, key: snapshotKey).recordMismatch(failure.message)
                }
                throw failure
            }
        }
    }

    struct FollowMismatch: Error {
        let index: Int
        let remote: RemoteUpload
    }

    private func follow(_ file: FollowedFile, forceFresh: String?, emit: @escaping @Sendable (UploadEvent) -> Void)
        async throws -> UploadOutcome
    {
        var plan = await FollowPlan.make(
            store: snapshots, key: snapshotKey, device: file.device, inode: file.inode, destination: target.destination,
            backend: backend, retries: retries)
        if let forceFresh { plan = FollowPlan(reason: forceFresh) }
        if let earlier = plan.snapshot?.receiptMismatch { throw ChunkedUploader.earlierMismatch(earlier) }
        if let abandoned = plan.abandoned { try? await backend.abort(abandoned) }
        var snapshot: ResumeSnapshot
        if let earlier = plan.snapshot {
            snapshot = earlier
        } else {
            try snapshots.remove(key: snapshotKey)
            snapshot = try await create(file, emit: emit)
        }
        let resumed = plan.snapshot != nil
        let report = ResumeReport(
            level: resumed ? .server : .none, reusedParts: plan.held.count,
            reusedBytes: plan.held.values.reduce(0) { $0 + $1.length }, reason: plan.reason)
        emit(.resume(report))
        if resumed {
            telemetry?.audit(.resumed, resumeLevel: ResumeLevel.server.rawValue)
        } else {
            telemetry?.audit(.started)
        }
        let idempotency = try ChunkIdempotencyManager(
            session: snapshot.chainSessionID, clock: clock,
            journal: snapshots.idempotencyJournal(session: snapshot.chainSessionID))
        let ledger = try ChunkedUploader.ledger(sessionID: snapshot.chainSessionID, count: 1 << 12)
        snapshot.acknowledged = snapshot.acknowledged.filter { plan.held[$0.key] != nil }
        run = FollowRun(
            snapshot: snapshot, acknowledged: plan.held, knownHashes: plan.knownHashes, ledger: ledger,
            started: clock.monotonicSeconds(), emit: emit)
        defer { run = nil }
        let parallel = Self.parallelism(backend, configured: configuration.parallel)
        let remote = snapshot.remote
        let partSize = snapshot.partSize
        let maximumParts = backend.capabilities.maximumParts
        var index = 0
        var lastSize: Int64 = -1
        var lastGrowth = clock.monotonicSeconds()
        var finalSize: Int64?
        try await withThrowingTaskGroup(of: Void.self) { group in
            var inFlight = 0
            while finalSize == nil {
                try Task.checkCancellation()
                if let failure = self.run?.failure { throw failure }
                let size = try file.currentSize()
                if size != lastSize {
                    lastSize = size
                    lastGrowth = clock.monotonicSeconds()
                }
                let start = Int64(index) * partSize
                var length: Int64?
                if size - start >= partSize {
                    length = partSize
                } else if options.end?.isFinished == true
                    || (clock.monotonicSeconds() - lastGrowth >= options.idleSeconds && !file.writerHoldsFile())
                {
                    // Done: one more look, so bytes written just before the close are not missed.
                    let settled = try file.currentSize()
                    guard settled == size else { continue }
                    finalSize = size
                    if size > start || size == 0 { length = size - start }
                }
                guard let length else {
                    if inFlight > 0, parallel == 1 {
                        // In-order backends: let the part in flight finish before sleeping.
                        try await group.next()
                        inFlight -= 1
                        continue
                    }
                    if try await self.waitForChange(file) { continue }
                    continue
                }
                guard index < maximumParts else {
                    throw UploaderError(
                        .invalidArgument,
                        "\(target.file) grew past \(maximumParts) parts of \(partSize) bytes, the destination's limit")
                }
                let part = try self.readPart(file, index: index, offset: start, length: length, remote: remote)
                index += 1
                guard let part else { continue }
                while inFlight >= parallel {
                    try await group.next()
                    inFlight -= 1
                }
                inFlight += 1
                group.addTask {
                    try await self.sendAndSettle(part, idempotency: idempotency, emit: emit)
                }
            }
            while try await group.next() != nil {}
        }
        if let failure = run?.failure { throw failure }
        guard let finalSize, var current = run else { throw UploaderError(.cancelled, "the upload stopped") }
        return try await complete(&current, size: finalSize, partCount: index, resumed: resumed, report: report)
    }

    /// Creates the remote upload without a size and saves the first snapshot.
    private func create(_ file: FollowedFile, emit: @escaping @Sendable (UploadEvent) -> Void) async throws
        -> ResumeSnapshot
    {
        let capabilities = backend.capabilities
        let preferred = Int64(configuration.chunkSize ?? ChunkReadOptions.defaultChunkSize)
        let layout: PartLayout
        do {
            layout = try PartLayout(objectSize: 0, preferred: preferred, capabilities: capabilities)
        } catch {
            throw UploaderError(.invalidArgument, error.message)
        }
        let sessionID = SecureRandom.bytes(16).map { String($0, radix: 16) }.joined()
        var deferred = UploadDescription(
            size: 0, layout: layout, contentType: configuration.contentType, metadata: configuration.metadata,
            chainSessionID: sessionID)
        deferred.sizeDeferred = true
        let description = deferred
        let backend = self.backend
        var remote: RemoteUpload
        do throws(TransportError) {
            // Once without retries: a protocol that cannot defer the length says so at once.
            remote = try await backend.create(description)
        } catch  where error.code == .protocolUnsupported {
            throw UploaderError(.followUnsupported, "--follow is not available here: \(error.message)")
        } catch {
            if !RetryPolicy.isRetryable(error.code) && !RetryPolicy.isPathFailure(error.code) {
                throw UploaderError(
                    .transportFailed, "the upload could not be created: \(error.message) (\(error.code))",
                    errno: error.errno)
            }
            (remote, _) = try await retries.withRetries(index: -1, emit: emit) {
                () async throws(TransportError) -> RemoteUpload in
                try await backend.create(description)
            }
        }
        guard remote.sizeDeferred == true else {
            throw UploaderError(.followUnsupported, "the destination created an upload of fixed size for --follow")
        }
        let size = try file.currentSize()
        let head = try file.read(offset: 0, count: Int(min(size, 4096)))
        var snapshot = ResumeSnapshot(
            filePath: target.file.bytes, destination: target.destination, mode: target.mode,
            endpoint: target.endpoint,
            fingerprint: ResumeSnapshot.Fingerprint(
                followed: file, size: size, modificationNanoseconds: 0, headSHA256: SHA256.hash(head).hex),
            remote: remote, partSize: layout.partSize, partCount: 1, chainSessionID: sessionID,
            createdAt: clock.wallWholeSeconds())
        snapshot.acknowledged = [:]
        try snapshots.save(try snapshot.serialized(), key: snapshotKey)
        return snapshot
    }

    /// The parts in flight: several where parts may go in parallel and out of order (native, S3), else one.
    static func parallelism(_ backend: any UploadBackend, configured: Int?) -> Int {
        let capabilities = backend.capabilities
        guard capabilities.parallelParts, capabilities.outOfOrderParts, backend.features.parallelFollow else {
            return 1
        }
        return max(1, configured ?? 4)
    }

    /// Sleeps until the file may have changed (inotify) or one poll interval passed; a failed send stops it.
    private func waitForChange(_ file: FollowedFile) async throws -> Bool {
        let events = file.drainEvents()
        if events { return true }
        try await Task.sleep(for: .milliseconds(Int64((options.pollInterval * 1000).rounded(.up))))
        return file.drainEvents()
    }

    /// Reads, hashes and commits part `index` (Merkle leaf and chain link in one step); nil when the destination
    /// holds it already. A part sent in an earlier run whose bytes differ now is a `FollowMismatch`.
    private func readPart(_ file: FollowedFile, index: Int, offset: Int64, length: Int64, remote: RemoteUpload)
        throws -> FollowPart?
    {
        guard var current = run else { throw CancellationError() }
        defer { run = current }
        let bytes = try file.read(offset: offset, count: Int(length))
        let sha256 = SHA256.hash(bytes)
        current.fileHash.update(bytes)
        _ = try ChunkedUploader.append(current.ledger, sha256)
        current.chunkHashes.append(sha256)
        current.readBytes = offset + length
        if let known = current.knownHashes[index], known != sha256 {
            throw FollowMismatch(index: index, remote: remote)
        }
        if current.acknowledged[index] != nil { return nil }
        var via = remote
        via.size = offset + length
        current.sentBytes += length
        current.partsSent += 1
        return FollowPart(
            index: index, offset: offset, bytes: bytes, sha256: sha256, crc32c: CRC32C.checksum(bytes),
            link: current.ledger.chainHead, remote: via)
    }
}

extension ResumeSnapshot.Fingerprint {
    /// The fingerprint a followed upload records: device and inode name the file; size and head are what it held
    /// at creation (the file may grow, so a resume compares part digests instead).
    init(followed file: FollowedFile, size: Int64, modificationNanoseconds: Int64, headSHA256: String) {
        self.size = size
        self.modificationNanoseconds = modificationNanoseconds
        self.inode = file.inode
        self.device = file.device
        self.headSHA256 = headSHA256
    }
}
