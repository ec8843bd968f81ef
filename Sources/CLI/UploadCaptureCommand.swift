import AetherCoding
import AetherIO
import AetherTransport
import AetherUploader
import FoundationEssentials
import Glibc
import Synchronization

/// `aether upload DIR DEST`: a capture (`CaptureJob`), with one live bar for the whole job.
enum UploadCapture {
    /// The options that go with a directory only.
    static let directoryOptions = ["include", "exclude", "first", "priority", "files", "marker"]

    /// Refuses the capture options when FILE is not a directory.
    static func checkFileOptions(_ parsed: Arguments) throws {
        for name in directoryOptions where parsed.option(name) != nil {
            throw Arguments.UsageError(description: "--\(name) goes with a directory to upload, not a file")
        }
        for name in ["follow-symlinks", "one-file-system", "no-batch", "recheck"] where parsed.flag(name) {
            throw Arguments.UsageError(description: "--\(name) goes with a directory to upload, not a file")
        }
    }

    static func run(
        directory: FilePath, destination: String, forced: TransportMode?, endpoint: String?, flavor: S3Flavor?,
        configuration: UploadConfiguration, arguments: Arguments
    ) async throws -> Int32 {
        for name in ["parity"] where arguments.flag(name) {
            throw Arguments.UsageError(description: "--\(name) takes a file, not a directory")
        }
        for name in ["trace"] where arguments.option(name) != nil {
            throw Arguments.UsageError(description: "--\(name) takes a file, not a directory")
        }
        for name in ["include", "exclude", "first", "priority"]
        where arguments.option(name) != nil && list(arguments, name).isEmpty {
            throw Arguments.UsageError(description: "--\(name) takes one or more comma-separated patterns")
        }
        var follow: CaptureFollow?
        if arguments.flag("follow") {
            var options = CaptureFollow(marker: arguments.option("marker"))
            if let seconds = try UploadRun.followIdle(arguments) { options.idleSeconds = seconds }
            do {
                try options.validate()
            } catch {
                throw Arguments.UsageError(description: "--marker or --follow-idle: \(error.message)")
            }
            follow = options
        } else if arguments.option("follow-idle") != nil || arguments.option("marker") != nil {
            throw Arguments.UsageError(description: "--follow-idle and --marker go with --follow")
        }
        var upload = UploadJob.Options(
            configuration: configuration,
            client: try UploadSetup.clientConfiguration(
                arguments, maximumSendRate: configuration.maximumBytesPerSecond),
            forcedProtocol: forced, stateDirectory: arguments.path("state-dir"))
        upload.detection.s3Endpoint = endpoint
        upload.detection.s3Flavor = flavor
        if let token = try UploadSetup.token(arguments) { upload.bearerToken(token) }
        var options = CaptureJob.Options(
            upload: upload, include: list(arguments, "include"), exclude: list(arguments, "exclude"),
            first: list(arguments, "first"), followSymbolicLinks: arguments.flag("follow-symlinks"),
            parallelFiles: try arguments.integer("files", default: 4, in: 1...64), follow: follow)
        options.oneFileSystem = arguments.flag("one-file-system")
        options.batchSmallFiles = !arguments.flag("no-batch")
        options.recheckDestination = arguments.flag("recheck")
        // --files N is a fixed number; without it the files in flight grow from 4 while that pays.
        options.growParallelFiles = arguments.option("files") == nil
        options.priorities = try priorities(arguments)
        let job = try CaptureJob(directory: directory, destination: destination, options: options)
        let view = CaptureView(id: job.key, json: arguments.flag("json"), quiet: arguments.flag("quiet"))
        let task = Task { try await job.run { view.handle($0) } }
        let signals = UploadSignals { task.cancel() }
        defer { signals.stop() }
        do {
            let outcome = try await task.value
            view.finish(outcome, destination: destination)
            if outcome.failed.contains(where: \.verificationFailed) { return UploadSetup.Exit.verificationFailed }
            return outcome.complete ? UploadSetup.Exit.done : UploadSetup.Exit.failed
        } catch let error as UploaderError where error.code == .cancelled {
            view.stop()
            let hint = "paused; run the same command again to resume (finished files are not sent again)"
            if view.mode == .json {
                view.json(CaptureJSON(event: "paused", id: job.key, message: hint, exit: UploadSetup.Exit.paused))
            } else {
                StandardError.write("aether: capture \(job.key) \(hint)\n")
            }
            return UploadSetup.Exit.paused
        } catch {
            // The job as a whole failed (the destination, the state directory, another run holding it): `--json`
            // readers get the `failed` line too; the line on standard error comes from the caller.
            view.stop()
            if view.mode == .json {
                view.json(
                    CaptureJSON(
                        event: "failed", id: job.key, message: FailureAdvice.line(for: error),
                        exit: UploadSetup.Exit.failed))
            }
            throw error
        }
    }

    /// A comma-separated list option, empty when not given.
    /// `--priority PATTERN=LEVEL,...`: the level names of `DataPriority`, highest first.
    static func priorities(_ arguments: Arguments) throws -> [(pattern: String, level: DataPriority)] {
        let names = DataPriority.allCases.map { "\($0)" }.joined(separator: ", ")
        return try list(arguments, "priority").map { entry in
            guard let equals = entry.lastIndex(of: "="), equals != entry.startIndex else {
                throw Arguments.UsageError(description: "--priority takes PATTERN=LEVEL entries, not \(entry)")
            }
            let level = String(entry[entry.index(after: equals)...])
            guard let priority = DataPriority.allCases.first(where: { "\($0)" == level }) else {
                throw Arguments.UsageError(description: "--priority: \(level) is not a level (\(names))")
            }
            return (String(entry[..<equals]), priority)
        }
    }

    static func list(_ arguments: Arguments, _ name: String) -> [String] {
        (arguments.option(name) ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
    }
}

/// Shows a capture: one bar for the whole job redrawn in place on a terminal (at most 10 times a second), a line
/// every 2 s otherwise, JSON lines per file and for the job with `--json`, nothing but errors with `--quiet`.
final class CaptureView: Sendable {
    let mode: UploadProgressView.Mode
    let id: String
    private let state = Mutex((lastDraw: -1.0, drewBar: false))
    private let clock = SystemClock()

    init(id: String, json: Bool, quiet: Bool) {
        self.id = id
        mode = json ? .json : quiet ? .quiet : isatty(1) == 1 ? .terminal : .lines
    }

    func handle(_ event: CaptureEvent) {
        switch event {
        case .started(let totals):
            if mode == .json {
                json(
                    CaptureJSON(
                        event: "capture", id: id, files: totals.files, total: totals.bytes,
                        alreadyUploadedFiles: totals.alreadyUploaded, skipped: totals.skipped))
            } else {
                note(
                    "capture \(id): \(totals.files) files (\(UploadProgressView.bytes(totals.bytes)))"
                        + (totals.alreadyUploaded > 0 ? ", \(totals.alreadyUploaded) already uploaded" : "")
                        + (totals.skipped > 0 ? ", \(totals.skipped) left out" : ""))
            }
        case .skipped(let path, let reason):
            if mode == .json {
                json(CaptureJSON(event: "skipped", id: id, path: path, reason: reason))
            } else {
                note("left out \(TerminalText.safe(path)): \(reason)")
            }
        case .lostAtDestination(let paths):
            if mode == .json {
                for path in paths { json(CaptureJSON(event: "lost", id: id, path: path)) }
            } else {
                let shown = paths.prefix(3).map { TerminalText.safe($0) }.joined(separator: ", ")
                note(
                    "the destination no longer holds \(paths.count) files an earlier run sent (\(shown)"
                        + (paths.count > 3 ? ", ..." : "") + "): sending them again")
            }
        case .job(.waiting(let what)): StandardError.write("aether: \(what)\n")
        case .job(.destination(let report)): if let note = report.note { self.note(note) }
        case .job(.pathChanged(let what)):
            note("the network path changed (\(what)): the requests in flight are sent again on the new path")
        case .job, .file: break
        case .fileCompleted(let file):
            if mode == .json {
                json(
                    CaptureJSON(
                        event: "file", id: id, path: file.path, size: file.size, sha256: file.sha256.hex,
                        location: file.location, alreadyUploaded: file.alreadyUploaded))
            }
        case .fileFailed(let failure):
            if mode == .json {
                json(CaptureJSON(event: "file-failed", id: id, path: failure.path, message: failure.message))
            } else {
                stop()
                StandardError.write("aether: \(TerminalText.safe(failure.path)) failed: \(failure.message)\n")
            }
        case .progress(let progress): show(progress)
        case .completed: break
        }
    }

    /// The job's last lines: the summary, or what failed.
    func finish(_ outcome: CaptureOutcome, destination: String) {
        stop()
        let sent = outcome.files.filter { !$0.alreadyUploaded }
        let bytes = outcome.files.reduce(Int64(0)) { $0 + $1.size }
        switch mode {
        case .json:
            json(
                CaptureJSON(
                    event: "completed", id: id, files: outcome.files.count, total: bytes,
                    alreadyUploadedFiles: outcome.files.count - sent.count, spotCheckedFiles: outcome.spotCheckedFiles,
                    failed: outcome.failed.count, root: outcome.root?.hex, manifest: outcome.manifestLocation,
                    receiverVerified: outcome.receiverVerified,
                    exit: outcome.complete ? UploadSetup.Exit.done : UploadSetup.Exit.failed))
        case .terminal, .lines:
            if outcome.complete {
                let earlier = outcome.files.count - sent.count
                StandardOutput.write(
                    "uploaded \(outcome.files.count) files (\(UploadProgressView.bytes(bytes))) to "
                        + "\(TerminalText.safe(destination)): \(sent.count) sent now, each verified against the "
                        + "destination's receipt"
                        + (outcome.spotCheckedFiles > 0
                            ? ", \(outcome.spotCheckedFiles) spot-checked (the small files by a sample over them)" : "")
                        + (earlier > 0
                            ? "; \(earlier) unchanged since an earlier run verified them (not sent again)" : "")
                        + "\nroot \(outcome.root?.hex ?? "-"); manifest at \(outcome.manifestLocation ?? "-")"
                        + (outcome.receiverVerified
                            ? "\nthe receiver checked the capture against what it holds and serves it at "
                                + "\(outcome.manifestLocation ?? "-")/capture" : "") + "\n")
            }
        case .quiet: break
        }
        if !outcome.failed.isEmpty {
            StandardError.write(
                "aether upload: \(outcome.failed.count) of \(outcome.files.count + outcome.failed.count) files failed "
                    + "(listed above); run the same command again to retry only those\n")
        }
    }

    /// Ends a bar drawn in place.
    func stop() {
        let drew = state.withLock { state in
            defer { state.drewBar = false }
            return state.drewBar
        }
        if drew { StandardOutput.write("\n") }
    }

    private func note(_ text: String) {
        guard mode == .terminal || mode == .lines else { return }
        stop()
        StandardOutput.write(TerminalText.safe(text) + "\n")
    }

    private func show(_ progress: CaptureProgress) {
        let now = clock.monotonicSeconds()
        let done = progress.completedFiles + progress.failedFiles == progress.totalFiles
        let draw = state.withLock { state -> Bool in
            let interval = mode == .lines ? 2.0 : 0.1
            guard mode != .quiet, done || now - state.lastDraw >= interval else { return false }
            state.lastDraw = now
            if mode == .terminal { state.drewBar = true }
            return true
        }
        guard draw else { return }
        switch mode {
        case .terminal: StandardOutput.write(Self.bar(progress), control: "\r\u{1B}[K")
        case .lines: StandardOutput.write(Self.summary(progress) + "\n")
        case .json:
            json(
                CaptureJSON(
                    event: "progress", id: id, files: progress.totalFiles, total: progress.totalBytes,
                    completed: progress.completedFiles, failed: progress.failedFiles,
                    acknowledged: progress.acknowledgedBytes, rate: progress.bytesPerSecond))
        case .quiet: break
        }
    }

    static func bar(_ progress: CaptureProgress) -> String {
        let width = 24
        let fraction =
            progress.totalBytes == 0 ? 1 : Double(progress.acknowledgedBytes) / Double(progress.totalBytes)
        let filled = min(width, Int(fraction * Double(width)))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
            + summary(progress)
    }

    static func summary(_ progress: CaptureProgress) -> String {
        var eta = "-"
        if let seconds = progress.secondsRemaining, seconds.isFinite, seconds >= 0 {
            eta = seconds < 3600 ? "\(Int(seconds))s" : "\(Int(seconds / 60))m"
        }
        return "\(progress.completedFiles)/\(progress.totalFiles) files "
            + "\(UploadProgressView.bytes(progress.acknowledgedBytes))/\(UploadProgressView.bytes(progress.totalBytes)) "
            + "\(UploadProgressView.bytes(Int64(progress.bytesPerSecond)))/s ETA \(eta)"
            + (progress.failedFiles > 0 ? " failed \(progress.failedFiles)" : "")
    }

    func json(_ event: CaptureJSON) { UploadProgressView.writeJSON(event) }
}

/// One `--json` line of a capture.
struct CaptureJSON: Encodable {
    var event: String
    var id: String
    var path: String? = nil
    var reason: String? = nil
    var message: String? = nil
    var files: Int? = nil
    var total: Int64? = nil
    /// Of `files`, those an earlier run uploaded (the `capture` and `completed` lines).
    var alreadyUploadedFiles: Int? = nil
    /// Files whose spot check passed in this run (the `completed` line).
    var spotCheckedFiles: Int? = nil
    var skipped: Int? = nil
    var completed: Int? = nil
    var failed: Int? = nil
    var acknowledged: Int64? = nil
    var rate: Double? = nil
    var size: Int64? = nil
    var sha256: String? = nil
    var location: String? = nil
    /// Whether this file was uploaded by an earlier run (the `file` lines).
    var alreadyUploaded: Bool? = nil
    var root: String? = nil
    var manifest: String? = nil
    var receiverVerified: Bool? = nil
    var exit: Int32? = nil

    enum CodingKeys: String, CodingKey {
        case event, id, path, reason, message, files, total, completed, failed, acknowledged, rate, size, sha256
        case location, root, manifest, exit, skipped
        case alreadyUploaded = "already_uploaded"
        case alreadyUploadedFiles = "already_uploaded_files"
        case spotCheckedFiles = "spot_checked_files"
        case receiverVerified = "receiver_verified"
    }
}
