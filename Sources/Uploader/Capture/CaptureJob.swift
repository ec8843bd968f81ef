public import AetherCoding
public import AetherIO
import AetherIntegrity
import AetherTransport
import Synchronization

/// A capture: a folder of many files as one resumable, verified upload, in one call. The folder is walked
/// (`CaptureWalk`: regular files, recursively, links not followed unless asked, include and exclude patterns), the
/// files go through one `UploadQueue` (at most `Options.parallelFiles` at once, in the order of the queue's six
/// priority levels, patterns in `Options.first` first, then by path) over one HTTP client and one probe of the
/// destination; each file is an `UploadJob`-style upload under its own key and lock, resumable as one. Each file
/// keeps its relative path: `s3://bucket/prefix/` + the path, or the path as the upload's `filename` metadata over
/// HTTP. A file finished and verified goes into the capture's journal (`CaptureJournal`), so the same call again
/// skips it while it is unchanged, resumes a half-sent one from its snapshot, and retries only what failed. When
/// every file is there, the manifest (`CaptureManifest`: every file and one root over them) is uploaded beside them.
public struct CaptureJob: Sendable {
    /// How a capture runs.
    public struct Options: Sendable {
        /// The uploads' options (client, state directory, configuration; `follow` is not used).
        public var upload: UploadJob.Options
        /// Only files matching one of these (all when empty); a pattern without `/` matches the name.
        public var include: [String]
        /// Never files matching one of these.
        public var exclude: [String]
        /// Files matching one of these go first (priority `.high`; the others `.normal`).
        public var first: [String]
        /// Priority by pattern on the queue's six levels, the first matching entry winning (before `first`): say
        /// meshes `.critical` and previews `.background`. A file no entry matches is `.high` when it matches `first`,
        /// else `.normal`.
        public var priorities: [(pattern: String, level: DataPriority)] = []
        /// Follow symbolic links (a link back to a directory above is a loop and skipped).
        public var followSymbolicLinks: Bool
        /// Stay on the folder's file system: directories another file system is mounted on are skipped. The
        /// kernel's own file systems (proc, sysfs, ...) are never entered either way.
        public var oneFileSystem = false
        /// Files uploaded at once; with `growParallelFiles`, at first (then at least 16 batches where small files
        /// are batched, or 32 files when most files are small and each is its own request: see `growParallelFiles`).
        public var parallelFiles: Int
        /// Let the files in flight grow from `parallelFiles` while it pays: the number doubles (up to 64) each time
        /// a window of completions delivered at least 15% more bytes per second than the window before, and stops
        /// growing once one did not. On a long round trip, where each file costs its own requests, this is what
        /// fills the link; on loopback it stays where more files stop helping. `--files N` sets a fixed number.
        /// Small files start higher: batches 16 at once (fixed), small files each its own request 32 (growing).
        public var growParallelFiles = true
        /// Follow a capture still being written (`CaptureFollow`); nil: the folder is uploaded as it is.
        public var follow: CaptureFollow?
        /// Ask the destination, before skipping the files the journal lists as finished, whether it still holds
        /// each (a native upload's status: complete, of the file's size); those it lost are sent again
        /// (`--recheck`). Off: the journal is trusted, and no request is made for an unchanged file.
        public var recheckDestination = false
        /// Send small files several to a request where the destination takes batches (native, `max-batch`,
        /// `docs/PROTOCOL.md` 3.10); off: each file is its own upload (`--no-batch`, for comparison).
        public var batchSmallFiles = true

        public init(
            upload: UploadJob.Options = UploadJob.Options(), include: [String] = [], exclude: [String] = [],
            first: [String] = [], followSymbolicLinks: Bool = false, parallelFiles: Int = 4,
            follow: CaptureFollow? = nil
        ) {
            self.follow = follow
            self.upload = upload
            self.include = include
            self.exclude = exclude
            self.first = first
            self.followSymbolicLinks = followSymbolicLinks
            self.parallelFiles = parallelFiles
        }
    }

    /// The folder, as given and resolved.
    public let directory: FilePath
    let canonical: FilePath
    /// The destination: `s3://bucket/prefix/` or an upload URL (`http(s)://`, probed once).
    public let destination: String
    /// The capture's id: its lock and journal in the state directory.
    public let key: String
    public let options: Options

    /// A capture of `directory` to `destination`; throws when the folder's path cannot be resolved.
    public init(directory: FilePath, destination: String, options: Options = Options()) throws(IOError) {
        self.directory = directory
        canonical = try UploadJob.canonical(directory)
        self.destination = destination
        self.options = options
        key = SnapshotKey.capture(canonicalPath: canonical, destination: Self.keyedDestination(destination))
    }

    /// The captures whose journals `stateDirectory` keeps: folder, destination and the files finished so far (a
    /// finished capture keeps its journal, so that running it again sends nothing).
    public static func kept(stateDirectory: UploadStateDirectory) throws(UploaderError) -> [CaptureStatus] {
        try CaptureJournal.kept(in: stateDirectory)
    }

    /// The destination as the capture's key sees it: an S3 prefix with or without its trailing `/` names the same
    /// keys (`destination(of:)`), so both are the same capture (`s3://b/p` and `s3://b/p/` resume each other).
    static func keyedDestination(_ destination: String) -> String {
        guard destination.hasPrefix("s3://") else { return destination }
        var trimmed = Substring(destination)
        while trimmed.hasSuffix("/"), trimmed.count > "s3://".count { trimmed = trimmed.dropLast() }
        return trimmed + "/"
    }

    /// Runs the capture in a task and returns its events; the stream ends after `.completed` or with the error.
    /// Ending the iteration cancels the capture: half-sent files keep their snapshots.
    public func events(bufferLimit: Int = 1024) -> AsyncThrowingStream<CaptureEvent, any Error> {
        EventStream.make(bufferLimit: bufferLimit) { emit in _ = try await self.run(emit) }
    }

    /// Runs the capture, passing each event to `emit`; returns the outcome (also sent as `.completed`). A file that
    /// fails is listed in the outcome and the others go on; the call throws only for the job as a whole
    /// (`.alreadyRunning`, `.cancelled`, a folder or destination that cannot be used).
    public func run(_ emit: @escaping @Sendable (CaptureEvent) -> Void) async throws -> CaptureOutcome {
        guard (1...64).contains(options.parallelFiles) else {
            throw UploaderError(.invalidArgument, "files at once must be 1...64")
        }
        try options.follow?.validate()
        let context = try UploadContext(options: options.upload)
        defer { context.client.shutDown() }
        let state = try UploadJob.canonical(context.state.path)
        if state == canonical || canonical.bytes.starts(with: state.bytes + [UInt8(ascii: "/")]) {
            throw UploaderError(
                .invalidArgument,
                "the state directory \(context.state.path) is the folder to upload or holds it: give a state directory "
                    + "outside \(directory)")
        }
        let lock = try UploadLock(directory: context.state, key: key)
        defer { withExtendedLifetime(lock) {} }
        let journal = try CaptureJournal(state: context.state, key: key)
        try journal.describe(capture: canonical, destination: destination)
        let job = Run(context: context, journal: journal, lock: lock, rules: try rules(context.state), emit: emit)
        let outcome: CaptureOutcome
        if let follow = options.follow {
            outcome = try await followed(follow, job)
        } else {
            outcome = try await once(job)
        }
        emit(.completed(outcome))
        return outcome
    }

    /// What one run of the job holds.
    struct Run {
        let context: UploadContext
        let journal: CaptureJournal
        let lock: UploadLock
        let rules: CaptureWalk.Rules
        let emit: @Sendable (CaptureEvent) -> Void
    }

    /// The folder as it is now: walked once, every file not in the journal uploaded, then the manifest.
    private func once(_ job: Run) async throws -> CaptureOutcome {
        let walk = try CaptureWalk.walk(directory, rules: job.rules)
        let (files, skips, unreadable) = Self.split(walk)
        for skip in skips { job.emit(.skipped(path: skip.path, reason: skip.reason)) }
        for failure in unreadable { job.emit(.fileFailed(failure)) }
        var results: [CaptureFileResult] = []
        var pending: [CaptureFile] = []
        for file in files {
            if let entry = job.journal.finished(file), let result = Self.result(file, entry) {
                results.append(result)
            } else {
                pending.append(file)
            }
        }
        if options.recheckDestination, !results.isEmpty {
            let lost = try await lostAtDestination(results, context: job.context)
            if !lost.isEmpty {
                results.removeAll { lost.contains($0.relativePath) }
                pending += files.filter { lost.contains($0.relativePath) }
                job.emit(.lostAtDestination(lost.map { String(decoding: $0, as: UTF8.self) }.sorted()))
            }
        }
        let tally = CaptureTally(files: files, done: results)
        job.emit(
            .started(
                CaptureTotals(
                    files: files.count, bytes: tally.totalBytes, alreadyUploaded: results.count,
                    skipped: skips.count)))
        for result in results { job.emit(.fileCompleted(result)) }
        job.emit(.progress(tally.progress()))
        var failed = unreadable
        if !pending.isEmpty {
            let sent = try await upload(pending, job, tally: tally)
            results += sent.results
            failed += sent.failed
        }
        return try await finish(results: results, failed: failed, skips: skips, job)
    }

    /// The walk's files and what it left out; a file named as the manifest at the top is left out too, since that
    /// name is the manifest's place at the destination.
    /// Entries that could not be read are failures, not skips: the capture is incomplete without them.
    static func split(_ walk: CaptureWalk) -> (files: [CaptureFile], skips: [CaptureSkip], failed: [CaptureFailure]) {
        var skips = walk.skipped.filter { !$0.failure }.map {
            CaptureSkip(path: String(decoding: $0.relativePath, as: UTF8.self), reason: $0.reason)
        }
        let failed = walk.skipped.filter(\.failure).map {
            CaptureFailure(
                path: String(decoding: $0.relativePath, as: UTF8.self), message: $0.reason, verificationFailed: false)
        }
        let manifestName = Array(CaptureManifest.name.utf8)
        if walk.files.contains(where: { $0.relativePath == manifestName }) {
            skips.append(CaptureSkip(path: CaptureManifest.name, reason: "the name of the capture's manifest"))
        }
        return (walk.files.filter { $0.relativePath != manifestName }, skips, failed)
    }

    /// The outcome: with the manifest stored when no file failed.
    func finish(results: [CaptureFileResult], failed: [CaptureFailure], skips: [CaptureSkip], _ job: Run)
        async throws -> CaptureOutcome
    {
        let sorted = results.sorted { $0.relativePath.lexicographicallyPrecedes($1.relativePath) }
        var root: Digest32?
        var manifestLocation: String?
        var failed = failed
        var receiverVerified = false
        if failed.isEmpty {
            let manifest = try CaptureManifest(sorted)
            root = manifest.root
            let location = try await storeManifest(manifest, job)
            manifestLocation = location
            do {
                receiverVerified = try await receiverChecks(manifest, at: location, job)
            } catch {
                let failure = Self.cancelledOr(error)
                if failure.code == .cancelled { throw failure }
                failed.append(
                    CaptureFailure(
                        path: CaptureManifest.name, message: Self.message(error),
                        verificationFailed: failure.code == .verificationFailed))
                job.emit(.fileFailed(failed[failed.count - 1]))
                manifestLocation = nil
            }
        }
        var outcome = CaptureOutcome(
            files: sorted, failed: failed, skipped: skips, root: root, manifestLocation: manifestLocation)
        outcome.receiverVerified = receiverVerified
        return outcome
    }

    /// Asks a native destination to check the stored manifest against what it holds (`GET .../capture`): true when it
    /// served the manifest's own bytes and root back; false where it cannot (S3, tus, IETF, an older receiver);
    /// `.verificationFailed` when it answered that the capture is not what it holds, or served other bytes.
    private func receiverChecks(_ manifest: CaptureManifest, at location: String, _ job: Run) async throws -> Bool {
        guard location.hasPrefix("http://") || location.hasPrefix("https://") else { return false }
        let detected = try await job.context.probe(destination(of: CaptureManifest.name)) { _ in }
        guard let native = detected.backend.features.native,
            let served = try await native.capture(at: location)
        else { return false }
        guard served.bytes == manifest.jsonBytes, served.root == manifest.root.hex else {
            throw UploaderError(
                .verificationFailed, "the receiver serves another capture manifest than the one stored (\(location))")
        }
        return true
    }

    /// The walk's rules; the state directory is never walked into.
    private func rules(_ state: UploadStateDirectory) throws -> CaptureWalk.Rules {
        var rules = CaptureWalk.Rules(
            include: options.include, exclude: options.exclude, followSymbolicLinks: options.followSymbolicLinks,
            oneFileSystem: options.oneFileSystem)
        if let status = try? Syscall.stat(state.path) {
            rules.avoid.insert(CaptureWalk.DirectoryIdentity(device: status.device, inode: status.inode))
        }
        return rules
    }

    static func result(_ file: CaptureFile, _ entry: CaptureJournal.Entry) -> CaptureFileResult? {
        guard let sha256 = try? Digest32(hex: entry.sha256), let root = try? Digest32(hex: entry.merkleRoot) else {
            return nil
        }
        return CaptureFileResult(
            relativePath: file.relativePath, size: file.size, sha256: sha256, merkleRoot: root,
            location: entry.location, alreadyUploaded: true)
    }

    /// The destination of the file at `relative`: the S3 prefix joined with the path, or the upload URL itself.
    func destination(of relative: String) -> String {
        guard destination.hasPrefix("s3://") else { return destination }
        let base = destination.dropFirst("s3://".count)
        guard let slash = base.firstIndex(of: "/") else { return destination + "/" + relative }
        let prefix = base[base.index(after: slash)...]
        return "s3://" + base[..<slash] + "/" + prefix + (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + relative
    }

    /// The priority of a file: the level of the first entry of `priorities` it matches, else `.high` when it
    /// matches a pattern of `first`, else `.normal`.
    func priority(of file: CaptureFile) -> DataPriority {
        let name = file.path.lastComponent.bytes
        if let entry = options.priorities.first(where: {
            CaptureWalk.matches($0.pattern, file.relativePath, name: name)
        }) {
            return entry.level
        }
        return options.first.contains { CaptureWalk.matches($0, file.relativePath, name: name) } ? .high : .normal
    }
}

/// A capture whose journal the state directory keeps (`CaptureJob.kept(stateDirectory:)`).
public struct CaptureStatus: Sendable, Hashable {
    /// The capture's id (its journal's name).
    public let key: String
    /// Once the manifest is stored at the destination (every file was there): its copy in the state directory, for
    /// `aether verify DIR MANIFEST`.
    public let manifest: FilePath?
    /// The folder, nil for a journal written before journals named it.
    public let directory: FilePath?
    /// The destination, nil likewise.
    public let destination: String?
    /// Files uploaded and verified so far.
    public let filesDone: Int
    /// Their bytes.
    public let bytesDone: Int64
}
