import AetherIO
import AetherIntegrity
import AetherTransport
import Glibc
import Synchronization

extension CaptureJob {
    struct Sent {
        var results: [CaptureFileResult] = []
        var failed: [CaptureFailure] = []
    }

    /// How one file ended.
    enum FileEnd {
        case done(CaptureFileResult)
        case failed(CaptureFailure)
    }

    /// Uploads `files` through one queue (the capture's `lock` covers each file: no lock file per file), admitted in
    /// priority order (`first` patterns, then path), `parallelFiles` at once; only the files running have a task,
    /// so memory stays bounded for 100,000 files. An HTTP destination is probed once and its backend shared; each
    /// `s3://` object gets its own (no request is sent for that).
    func upload(_ files: [CaptureFile], _ job: Run, tally: CaptureTally) async throws -> Sent {
        let (context, journal, lock, emit) = (job.context, job.journal, job.lock, job.emit)
        let jobEvent: @Sendable (UploadEvent) -> Void = { emit(.job($0)) }
        let shared = destination.hasPrefix("s3://") ? nil : try await context.probe(destination, emit: jobEvent)
        let first: DetectedBackend
        if let shared {
            first = shared
        } else {
            first = try await context.probe(destination(of: files[0].name), emit: jobEvent)
        }
        emit(.job(.destination(DestinationReport(mode: first.mode, note: first.fallbackReason))))
        let watch = context.watch(first, emit: jobEvent)
        // Small files travel in batches where the receiver takes them (one request, no round trip each); a batch
        // takes one place in the queue, as a file does.
        let batcher = shared.flatMap { Batcher(backend: $0, options: options) }
        let window: FileWindow
        let mostlySmall = files.count { $0.size <= Self.sampledTogetherBytes } * 2 > files.count
        if batcher != nil, options.growParallelFiles {
            // Batches keep the link busy without growing: 16 in flight (up to 16 MiB) filled 0.81 of a lossy 50 Mbit/s,
            // 80 ms link where 32 and 64 overflowed its queue (0.75, 0.69; docs/CAPTURES.md).
            window = FileWindow(start: max(options.parallelFiles, Self.batchesInFlight), maximum: nil)
        } else if mostlySmall, options.growParallelFiles {
            // Small files each its own request (S3, tus, IETF): each costs a round trip or two, so many go at once
            // from the start. Grown from 4 the window often stopped at 8 on a noisy link (41 files/s to RGW at 80 ms
            // where 32 at once made 115).
            window = FileWindow(
                start: max(options.parallelFiles, Self.smallFilesInFlight), maximum: Self.maximumParallelFiles)
        } else {
            window = FileWindow(
                start: options.parallelFiles, maximum: options.growParallelFiles ? Self.maximumParallelFiles : nil)
        }
        let queue = UploadQueue(maximumRunning: window.maximum, maximumWaiting: 1)
        let ordered = files.map { (file: $0, priority: priority(of: $0)) }.sorted {
            $0.priority != $1.priority
                ? $0.priority < $1.priority : $0.file.relativePath.lexicographicallyPrecedes($1.file.relativePath)
        }
        // The small files are spot-checked as one population (the capture is one upload to its owner): a sample of
        // the spec's size over them, drawn from the CSPRNG, so each small file does not pay a check's two round
        // trips; larger files are checked as every upload is.
        let small = ordered.indices.filter { ordered[$0].file.size <= Self.sampledTogetherBytes }
        let checked = Set(ByzantineSampler.sample(chunkCount: small.count).map { small[$0] })
        let unchecked = Set(small).subtracting(checked)
        var sent = Sent()
        func take(_ ends: [FileEnd]?) {
            for end in ends ?? [] {
                switch end {
                case .done(let done):
                    sent.results.append(done)
                    window.completed(bytes: done.size)
                case .failed(let failure): sent.failed.append(failure)
                }
            }
        }
        let work = Self.plan(ordered.map(\.file), batcher: batcher)
        do {
            try await withThrowingTaskGroup(of: [FileEnd].self) { group in
                for item in work {
                    // Admitted here, in the order above, so the first files out are the first in that order.
                    while queue.counts.running >= window.limit, let ends = try await group.next() { take(ends) }
                    try await queue.enter(priority: ordered[item[0]].priority)
                    let files = item.map { (file: ordered[$0].file, spotCheck: !unchecked.contains($0)) }
                    group.addTask {
                        defer { queue.leave() }
                        if let batcher, files.count > 1 || batcher.takes(files[0].file) {
                            return try await self.uploadBatch(
                                files, batcher: batcher, context: context, journal: journal, tally: tally, lock: lock,
                                emit: emit)
                        }
                        return [
                            try await self.uploadOne(
                                files[0].file, shared: shared, spotCheck: files[0].spotCheck, context: context,
                                journal: journal, tally: tally, lock: lock, emit: emit)
                        ]
                    }
                }
                while let ends = try await group.next() { take(ends) }
            }
        } catch {
            await watch.stop()
            throw Self.cancelledOr(error)
        }
        await watch.stop()
        return sent
    }

    /// Batches (or files) in flight when small files are batched and `--files` was not given.
    static let batchesInFlight = 16

    /// Files in flight at first when most files are small and are not batched, and `--files` was not given.
    static let smallFilesInFlight = 32

    /// The most files in flight a growing window reaches.
    static let maximumParallelFiles = 64

    /// Files in flight: fixed, or grown while each doubling delivers more (`Options.growParallelFiles`).
    final class FileWindow {
        private(set) var limit: Int
        let maximum: Int
        private var growing: Bool
        private var windowStart: ContinuousClock.Instant
        private var windowBytes: Int64 = 0
        private var windowFiles = 0
        private var previousRate: Double?

        init(start: Int, maximum: Int?, at now: ContinuousClock.Instant = .now) {
            limit = start
            self.maximum = max(start, maximum ?? start)
            growing = self.maximum > start
            windowStart = now
        }

        /// A file of `bytes` completed. At the end of a window (as many completions as the limit, at least 8) the
        /// limit doubles when the window's rate beat the one before by 15% (the first window always doubles); when
        /// it did not, the limit goes back to the last one that paid and stays there.
        func completed(bytes: Int64, at now: ContinuousClock.Instant = .now) {
            guard growing else { return }
            windowBytes += bytes
            windowFiles += 1
            guard windowFiles >= max(limit, 8) else { return }
            let elapsed = windowStart.duration(to: now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let rate = Double(windowBytes) / max(seconds, 1e-6)
            windowStart = now
            windowBytes = 0
            windowFiles = 0
            if let previousRate, rate < previousRate * 1.15 {
                limit = max(1, limit / 2)
                growing = false
                return
            }
            previousRate = rate
            limit = min(maximum, limit * 2)
            if limit == maximum { growing = false }
        }
    }

    /// Files this small or smaller are spot-checked as one population (a sample over them), not each.
    static let sampledTogetherBytes: Int64 = 1 << 20

    /// Uploads one file; a failure of the file is its result, and only cancellation is thrown.
    func uploadOne(
        _ file: CaptureFile, shared: DetectedBackend?, spotCheck: Bool = true, context: UploadContext,
        journal: CaptureJournal,
        tally: CaptureTally, lock: UploadLock, emit: @escaping @Sendable (CaptureEvent) -> Void
    ) async throws -> FileEnd {
        let path = file.name
        guard file.hasUTF8Name else {
            return failed(
                path,
                "its name is not valid UTF-8 and every destination names files with text: rename it (nothing was "
                    + "sent)", tally: tally, emit: emit)
        }
        let fileDestination = destination(of: path)
        do {
            let backend: DetectedBackend
            if let shared {
                backend = shared
            } else {
                backend = try await context.probe(fileDestination) { emit(.file(path: path, $0)) }
            }
            var configuration = options.upload.configuration
            configuration.metadata["filename"] = path
            if !spotCheck { configuration.flags.byzantineSampling = false }
            let key = SnapshotKey.derive(
                canonicalPath: canonical.appending(try FilePath(bytes: file.relativePath)), destination: fileDestination
            )
            let outcome = try await context.upload(
                file: file.path, destination: fileDestination, key: key, backend: backend,
                configuration: configuration, telemetry: nil, lock: lock,
                expectedIdentity: (file.device, file.inode)
            ) { event in
                emit(.file(path: path, event))
                if case .progress(let progress) = event, tally.note(path, acknowledged: progress.acknowledgedBytes) {
                    emit(.progress(tally.progress()))
                }
            }
            try journal.record(CaptureJournal.Entry(file, outcome: outcome))
            let result = CaptureFileResult(
                relativePath: file.relativePath, size: outcome.receipt.size, sha256: outcome.sha256,
                merkleRoot: outcome.merkleRoot, location: outcome.receipt.location, alreadyUploaded: false,
                spotChecked: outcome.spotChecks?.passed == true)
            tally.completed(path, size: result.size)
            emit(.fileCompleted(result))
            emit(.progress(tally.progress()))
            return .done(result)
        } catch {
            let failure = Self.cancelledOr(error)
            // Cancelled, or the state directory failing (full, refused, a descriptor limit): every file after would
            // fail the same way, each leaving work behind, so the job stops with the cause.
            if failure.code == .cancelled || Self.stopsTheJob(failure) { throw failure }
            return failed(
                path, Self.message(error), verification: failure.code == .verificationFailed, tally: tally, emit: emit)
        }
    }

    func failed(
        _ path: String, _ message: String, verification: Bool = false, tally: CaptureTally,
        emit: @Sendable (CaptureEvent) -> Void
    ) -> FileEnd {
        let failure = CaptureFailure(path: path, message: message, verificationFailed: verification)
        tally.failed(path)
        emit(.fileFailed(failure))
        emit(.progress(tally.progress()))
        return .failed(failure)
    }

    /// `.cancelled` for a cancellation (of the task, or as the uploader reports it), else the error as an
    /// `UploaderError` (`.transportFailed` for another kind).
    static func cancelledOr(_ error: any Error) -> UploaderError {
        if let error = error as? UploaderError {
            return Task.isCancelled ? UploaderError(.cancelled, error.message) : error
        }
        if error is CancellationError || Task.isCancelled || (error as? TransportError)?.code == .cancelled {
            return UploaderError(.cancelled, "the capture was cancelled")
        }
        return UploaderError(.transportFailed, message(error))
    }

    /// Failures of this host's side that no other file would escape: the state directory (its snapshots, journal,
    /// key or locks), a system call the job needs, no descriptors or no space left.
    static func stopsTheJob(_ failure: UploaderError) -> Bool {
        if let errno = failure.errno, [EMFILE, ENFILE, ENOSPC, EDQUOT].contains(errno) { return true }
        return [.snapshotUnavailable, .systemCall, .stateDirectoryRefused, .masterKeyDamaged].contains(failure.code)
    }

    /// What went wrong, for people.
    static func message(_ error: any Error) -> String {
        if let error = error as? UploaderError { return error.message }
        if let error = error as? TransportError { return "\(error.message) (\(error.code))" }
        if let error = error as? IOError { return error.message }
        return "\(error)"
    }

    /// Writes the manifest to the state directory (`captures/KEY.json`, replaced atomically unless it holds these
    /// bytes already) and uploads it as `.aether-capture.json` beside the files; returns where the destination
    /// keeps it. Like the files, it is journaled: a rerun whose manifest did not change sends nothing.
    func storeManifest(_ manifest: CaptureManifest, _ job: Run) async throws -> String {
        let (context, journal, lock, emit) = (job.context, job.journal, job.lock, job.emit)
        let path = try writeManifest(manifest.jsonBytes, state: context.state)
        let status = try Syscall.stat(path)
        let file = CaptureFile(
            relativePath: Array(CaptureManifest.name.utf8), path: path, size: status.size,
            modificationNanoseconds: status.modificationNanoseconds, changeNanoseconds: status.changeNanoseconds,
            inode: status.inode, device: status.device)
        if let entry = journal.finished(file) { return entry.location }
        let fileDestination = destination(of: CaptureManifest.name)
        let events: @Sendable (UploadEvent) -> Void = { emit(.file(path: CaptureManifest.name, $0)) }
        let backend = try await context.probe(fileDestination, emit: events)
        var configuration = options.upload.configuration
        configuration.metadata["filename"] = CaptureManifest.name
        let outcome = try await context.upload(
            file: path, destination: fileDestination,
            key: SnapshotKey.derive(canonicalPath: path, destination: fileDestination), backend: backend,
            configuration: configuration, telemetry: nil, lock: lock, emit: events)
        try journal.record(CaptureJournal.Entry(file, outcome: outcome))
        return outcome.receipt.location
    }

    private func writeManifest(_ bytes: [UInt8], state: UploadStateDirectory) throws -> FilePath {
        let root = try state.open()
        defer { AnchoredFiles.closeDescriptor(root) }
        let directory = try state.openSubdirectory("captures", in: root)
        defer { AnchoredFiles.closeDescriptor(directory) }
        let name = key + ".json"
        let shown = state.path.appending("captures").appending(name)
        if let kept = try? Syscall.openat(
            directory, name, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK, path: shown.description)
        {
            let held = try? Syscall.readAll(kept, limit: bytes.count + 1, path: shown.description)
            Syscall.close(kept)
            if held == bytes { return shown }
        }
        let temporary = try Syscall.openat(
            directory, name + ".tmp", flags: O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o600,
            path: shown.description)
        do {
            try Syscall.writeFully(temporary, bytes, path: shown.description)
            try Syscall.fsync(temporary, path: shown.description)
        } catch {
            Syscall.close(temporary)
            throw error
        }
        Syscall.close(temporary)
        try Syscall.renameat(directory, name + ".tmp", directory, name, path: shown.description)
        return shown
    }
}

/// The counters of a capture across its files, behind a lock (files report from several tasks).
final class CaptureTally: Sendable {
    private struct State {
        var completedFiles: Int
        var failedFiles = 0
        var completedBytes: Int64
        /// Acknowledged bytes of files under way.
        var underWay: [String: Int64] = [:]
    }

    let totalFiles: Int
    let totalBytes: Int64
    private let startBytes: Int64
    private let started = ContinuousClock.now
    private let state: Mutex<State>

    init(files: [CaptureFile], done: [CaptureFileResult]) {
        totalFiles = files.count
        totalBytes = files.reduce(0) { $0 + $1.size }
        startBytes = done.reduce(0) { $0 + $1.size }
        state = Mutex(State(completedFiles: done.count, completedBytes: startBytes))
    }

    /// Notes a file's acknowledged bytes; true when they changed.
    func note(_ path: String, acknowledged: Int64) -> Bool {
        state.withLock { state in
            guard state.underWay[path] != acknowledged else { return false }
            state.underWay[path] = acknowledged
            return true
        }
    }

    func completed(_ path: String, size: Int64) {
        state.withLock { state in
            state.underWay[path] = nil
            state.completedFiles += 1
            state.completedBytes += size
        }
    }

    func failed(_ path: String) {
        state.withLock { state in
            state.underWay[path] = nil
            state.failedFiles += 1
        }
    }

    func progress() -> CaptureProgress {
        let seconds = max(started.duration(to: .now) / .seconds(1), 1e-3)
        return state.withLock { state in
            let acknowledged = min(totalBytes, state.completedBytes + state.underWay.values.reduce(0, +))
            let rate = Double(acknowledged - startBytes) / seconds
            return CaptureProgress(
                totalFiles: totalFiles, completedFiles: state.completedFiles, failedFiles: state.failedFiles,
                totalBytes: totalBytes, acknowledgedBytes: acknowledged, bytesPerSecond: rate,
                secondsRemaining: rate > 0 ? Double(totalBytes - acknowledged) / rate : nil)
        }
    }
}
