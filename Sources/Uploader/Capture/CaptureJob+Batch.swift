import AetherIO
import AetherIntegrity
import AetherTransport

/// Small files in batches (`docs/PROTOCOL.md` 3.10, `docs/CAPTURES.md`): over native, to a receiver that advertises
/// `max-batch`, the files of at most `Batcher.largestFile` go several to a request, each with its own digests, each
/// stored as its own object and acknowledged together, so a small file costs no creation and completion round trips
/// of its own and the small files are one long flow on the link instead of many short ones.
extension CaptureJob {
    /// How the capture batches for one receiver.
    struct Batcher: Sendable {
        let backend: DetectedBackend
        let native: any NativeFeaturesBackend
        /// The most files and bytes in one batch.
        let files: Int
        let bytes: Int64
        /// The largest file batched.
        let largestFile: Int64

        /// Files this small or smaller are batched (when the receiver takes files this large).
        static let smallFileBytes: Int64 = 1 << 20
        /// A batch carries at most this many bytes of files: on a slow link a cut batch is sent again whole, so a
        /// batch stays about one second of a 10 Mbit/s link.
        static let targetBytes: Int64 = 1 << 20
        /// A batch carries at most this many files: the receiver stores them one after the other.
        static let maximumFiles = 64

        /// The batcher of `backend`, nil when it is not native, its receiver takes no batches, or the options ask
        /// for none.
        init?(backend: DetectedBackend, options: Options) {
            guard options.batchSmallFiles, let native = backend.backend.features.native, native.largestBatchedFile > 0
            else { return nil }
            self.backend = backend
            self.native = native
            files = min(Self.maximumFiles, native.server.maximumBatch)
            var bytes = min(Self.targetBytes, native.server.maximumBatchBytes)
            // Under a rate cap a batch is a quarter second of it (at least 16 KiB), so the pacer spaces batches as
            // it spaces parts: one batch of a whole second's bytes would leave at once.
            if let rate = options.upload.configuration.maximumBytesPerSecond {
                bytes = min(bytes, max(16 << 10, rate / 4))
            }
            self.bytes = bytes
            largestFile = min(Self.smallFileBytes, native.largestBatchedFile, bytes)
        }

        /// Whether `file` goes in a batch.
        func takes(_ file: CaptureFile) -> Bool { file.size <= largestFile && file.hasUTF8Name }
    }

    /// The queue's work in `files`' order: each file alone, or, with `batcher`, runs of small files in batches of at
    /// most its files and bytes (a batch stands where its first file stood). Indices into `files`.
    static func plan(_ files: [CaptureFile], batcher: Batcher?) -> [[Int]] {
        guard let batcher else { return files.indices.map { [$0] } }
        var work: [[Int]] = []
        var batch: [Int] = []
        var batchBytes: Int64 = 0
        var batchSlot: Int?
        for (index, file) in files.enumerated() {
            guard batcher.takes(file) else {
                work.append([index])
                continue
            }
            if !batch.isEmpty, batch.count == batcher.files || batchBytes + file.size > batcher.bytes {
                work[batchSlot ?? 0] = batch
                batch = []
                batchBytes = 0
            }
            if batch.isEmpty {
                batchSlot = work.count
                work.append([])
            }
            batch.append(index)
            batchBytes += file.size
        }
        if let batchSlot, !batch.isEmpty { work[batchSlot] = batch }
        return work
    }

    /// Uploads `files` in one batch: each file read whole under the change guard (a file that is not as walked, or
    /// cannot be read, goes on its own instead, where its failure is reported as any file's), the batch sent with
    /// retries of the request, each stored file's receipt checked against the file, the sampled ones spot-checked,
    /// each journaled. A file the receiver refused, and every file when the batch could not be sent, go on their own
    /// (`uploadOne`, with its own retries and resume); a receipt that disagrees with the file fails it (exit 4).
    func uploadBatch(
        _ files: [(file: CaptureFile, spotCheck: Bool)], batcher: Batcher, context: UploadContext,
        journal: CaptureJournal, tally: CaptureTally, lock: UploadLock,
        emit: @escaping @Sendable (CaptureEvent) -> Void
    ) async throws -> [FileEnd] {
        var alone: [(file: CaptureFile, spotCheck: Bool)] = []
        var batch: [(file: CaptureFile, spotCheck: Bool, identity: FileIdentity, sent: NativeBatchFile)] = []
        for entry in files {
            let file = entry.file
            guard batcher.takes(file), let (identity, bytes) = try? Self.readWhole(file) else {
                alone.append(entry)
                continue
            }
            var metadata = options.upload.configuration.metadata
            metadata["filename"] = file.name
            batch.append((file, entry.spotCheck, identity, NativeBatchFile(bytes: bytes, metadata: metadata)))
        }
        var ends: [FileEnd] = []
        if !batch.isEmpty {
            try await context.pacer?.admit(batch.reduce(0) { $0 + $1.sent.size })
            if let outcomes = try await sendBatch(batch.map(\.sent), batcher: batcher, emit: emit) {
                for (entry, outcome) in zip(batch, outcomes) {
                    switch outcome {
                    case .stored(let remote, let receipt):
                        ends.append(
                            try await finishBatched(
                                entry.file, spotCheck: entry.spotCheck, identity: entry.identity, sent: entry.sent,
                                remote: remote, receipt: receipt, batcher: batcher, context: context,
                                journal: journal, tally: tally, emit: emit))
                    case .refused(let error) where error.code == .receiptMismatch:
                        ends.append(
                            failed(entry.file.name, Self.message(error), verification: true, tally: tally, emit: emit))
                    case .refused:
                        alone.append((entry.file, entry.spotCheck))
                    }
                }
            } else {
                alone += batch.map { ($0.file, $0.spotCheck) }
            }
        }
        for entry in alone {
            ends.append(
                try await uploadOne(
                    entry.file, shared: batcher.backend, spotCheck: entry.spotCheck, context: context,
                    journal: journal, tally: tally, lock: lock, emit: emit))
        }
        return ends
    }

    /// Attempts at one batch before its files go on their own.
    static let batchAttempts = 4

    /// Sends the batch, again after a quick failure worth retrying (a reset, a refused connection, a busy receiver;
    /// files completed before a cut are found held and stored once), with backoff from 0.25 s; nil when it could not
    /// be sent. A batch whose answer stalled (the request's idle limit) is not sent again: its files go each on its own
    /// at once, so a path that swallows batch answers costs one idle limit, not four.
    private func sendBatch(
        _ files: [NativeBatchFile], batcher: Batcher, emit: @escaping @Sendable (CaptureEvent) -> Void
    ) async throws -> [NativeBatchOutcome]? {
        var delay = 0.25
        for attempt in 1...Self.batchAttempts {
            try Task.checkCancellation()
            do throws(TransportError) {
                return try await batcher.native.send(batch: files)
            } catch {
                if error.code == .cancelled { throw UploaderError(.cancelled, "the capture was cancelled") }
                guard RetryPolicy.isRetryable(error.code), error.code != .timedOut, attempt < Self.batchAttempts
                else { return nil }
            }
            try await RetryPolicy.sleep(seconds: delay)
            delay *= 2
        }
        return nil
    }

    /// A batched file the receiver stored: its spot check when sampled, its journal line, its events.
    private func finishBatched(
        _ file: CaptureFile, spotCheck: Bool, identity: FileIdentity, sent: NativeBatchFile, remote: RemoteUpload,
        receipt: UploadReceipt, batcher: Batcher, context: UploadContext, journal: CaptureJournal, tally: CaptureTally,
        emit: @escaping @Sendable (CaptureEvent) -> Void
    ) async throws -> FileEnd {
        let path = file.name
        var spotChecks: SpotCheckReport?
        if spotCheck {
            do {
                spotChecks = try await context.spotCheck(
                    file: file.path, destination: destination(of: path), backend: batcher.backend, remote: remote,
                    chunkHashes: [sent.sha256], identity: identity, configuration: options.upload.configuration
                ) { emit(.file(path: path, $0)) }
            } catch {
                let failure = Self.cancelledOr(error)
                if failure.code == .cancelled { throw failure }
                return failed(
                    path, Self.message(error), verification: failure.code == .verificationFailed, tally: tally,
                    emit: emit)
            }
        }
        // The events of a one-chunk upload: its chunk acknowledged, then its outcome (the receipt's three digests
        // matched the file's, `NativeBackend.send(batch:)`).
        emit(
            .file(path: path, .chunkAcknowledged(PartReceipt(index: 0, length: sent.size, checksumCRC32C: sent.crc32c)))
        )
        var outcome = UploadOutcome(
            receipt: receipt, sha256: sent.sha256, merkleRoot: sent.merkleRoot, chainHead: sent.chainHead,
            serverVerified: (spotChecks?.passed == true ? ["byzantine-sample"] : []) + [
                "sha256", "merkle-root", "chain-head",
            ],
            partsSent: 1, bytesSent: sent.size, partCount: 1,
            resume: ResumeReport(level: .none, reusedParts: 0, reusedBytes: 0, reason: nil))
        outcome.spotChecks = spotChecks
        emit(.file(path: path, .completed(outcome)))
        try journal.record(
            CaptureJournal.Entry(file, sha256: sent.sha256, merkleRoot: sent.merkleRoot, location: receipt.location))
        let result = CaptureFileResult(
            relativePath: file.relativePath, size: receipt.size, sha256: sent.sha256, merkleRoot: sent.merkleRoot,
            location: receipt.location, alreadyUploaded: false, spotChecked: spotChecks?.passed == true)
        tally.completed(path, size: result.size)
        emit(.fileCompleted(result))
        emit(.progress(tally.progress()))
        return .done(result)
    }

    /// The bytes of `file`, read whole and checked to be the file the walk found (device, inode, size) and unchanged
    /// by the read.
    static func readWhole(_ file: CaptureFile) throws -> (FileIdentity, [UInt8]) {
        let guarded = try GuardedFile(path: file.path)
        let identity = guarded.identity
        guard identity.device == file.device, identity.inode == file.inode, identity.size == file.size,
            identity.modificationNanoseconds == file.modificationNanoseconds
        else { throw IOError(.invalidArgument, "\(file.path) changed since the walk", path: file.path.description) }
        return (identity, try guarded.readAll(maximumBytes: Int(file.size)))
    }
}
