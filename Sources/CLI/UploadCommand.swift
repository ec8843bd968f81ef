import AetherIO
import AetherScheduling
import AetherTransport
import AetherUploader
import Dispatch
import Glibc

/// `aether upload FILE DEST [options]`: a resumable, verified upload (issue 17).
enum UploadCommand: CLICommand {
    static let name = "upload"
    static let summary = "upload a file (resumable, verified): aether upload FILE DEST"
    static let usage = """
        usage: aether upload FILE|DIR DEST [--protocol native|ietf|tus|s3] [--parallel N] [--chunk-size N]
                                       [--part-size N]
                                       [--max-rate N] [--congestion C]
                                       [--parity] [--pin SHA256] [--token T | --token-file F] [--endpoint URL]
                                       [--s3-flavor aws|r2|minio|ceph|unknown]
                                       [--state-dir D] [--flags LIST] [--trace FILE] [--json] [--quiet]
                                       [--follow [--follow-idle SECONDS] [--marker NAME]]
                                       [--include LIST] [--exclude LIST] [--first LIST] [--priority LIST] [--files N]
                                       [--follow-symlinks] [--one-file-system] [--no-batch] [--recheck]
          FILE            the file to upload (a regular file; read under the change guard)
          DIR             a directory: every regular file under it, recursively, as one capture (each file
                          resumable and verified, a journal of finished files in the state directory, then a
                          manifest .aether-capture.json with one root over all files beside them; with s3://bucket/
                          prefix/ each file's key is the prefix and its relative path, over HTTP the relative
                          path is the upload's filename). Links are not followed, FIFOs and devices left out
          --include LIST  with DIR: only files matching one of these comma-separated patterns (a pattern without
                          / matches the file's name, one with / its relative path; * crosses /)
          --exclude LIST  with DIR: never files matching one of these patterns
          --first LIST    with DIR: files matching one of these patterns go first
          --priority LIST with DIR: PATTERN=LEVEL entries on the queue's six levels (critical, high, elevated,
                          normal, low, background; the first entry a file matches wins, before --first), such
                          as 'meshes/*=critical,*.jpg=low'
          --files N       with DIR: files uploaded at once, 1...64 (default: 4, doubled while each doubling
                          delivers 15% more, up to 64: on a long round trip each file costs its own requests)
          --follow-symlinks  with DIR: follow symbolic links (a link back up the tree is a loop, left out)
          --one-file-system  with DIR: stay on DIR's file system, leaving out directories another is mounted on
                          (the kernel's own, such as /proc and /sys, are always left out)
          --recheck       with DIR: before skipping the files an earlier run finished, ask a native
                          destination whether it still holds each (complete, of the file's size) and send
                          again those it lost (without it the journal is trusted: no request per file)
          --no-batch      with DIR: send each small file as its own upload (by default files of up to 1 MiB go
                          several to a request to a receiver that takes batches: no round trips of their own)
          --follow with DIR  a capture still being written: each file goes once no process holds it open for
                          writing and it has not changed for 1 s (again if it changes later); the job ends when
                          nothing changed for --follow-idle seconds (default 5) and every file is sent, or once
                          the file --marker NAME appears at the top of DIR (it is not uploaded)
          DEST            s3://bucket/key (with --endpoint URL for a non-AWS store; credentials from AWS_* or
                          ~/.aws), or an http(s):// URL probed for native, IETF resumable upload or tus
          --protocol P    use P instead of the first the server offers (native, ietf, tus, s3)
          --parallel N    parts in flight at once, 1...64 (default: the scheduler decides; IETF and tus take 1)
          --chunk-size N  part size such as 4M, one part per request (default: the scheduler decides; the
                          backend's limits apply)
          --part-size N   part size when each request carries a run of parts sized by the scheduler, such as 1M
                          (default where the backend takes runs: 1 MiB); --chunk-size wins
          --max-rate N    cap the rate at N bytes per second, such as 20M (default: no cap)
          --congestion C  the TCP congestion control of the upload's connections: a name such as bbr or cubic, or
                          system for the system's default (default bbr, where the system offers and allows it;
                          else the system's; the completed line's congestion_control says which ran)
          --parity        ask for parity chunks on a lossy link (only a backend that takes parity gets any)
          --pin SHA256    accept the server only with this SPKI pin (hex; aether pin CERT.pem prints it)
          --token T       send Authorization: Bearer T (--token-file F reads it from F's first line)
          --endpoint URL  the S3 endpoint (MinIO, Ceph, R2, a test server)
          --s3-flavor F   the S3 server behind it, for what it checks: aws, r2, minio (each part's CRC32C and
                          signed SHA-256), ceph (the signed SHA-256 only), unknown (nothing taken on trust: the
                          client compares each part's ETag with its MD5). Default: aws without --endpoint,
                          r2 for *.r2.cloudflarestorage.com, aws for *.amazonaws.com, else unknown
          --state-dir D   where resume state lives (default $XDG_STATE_HOME/aether or ~/.local/state/aether)
          --flags LIST    switch features on or off over the defaults (all on): -adaptive-chunking,
                          -byzantine-sampling, -parity, -dedup, -compression (later entries win)
          --trace FILE    also write the per-attempt trace (JSON lines) to FILE, which must not exist; the trace
                          and the signed audit log are always kept under the state directory's telemetry/
          --follow        FILE is still being written: send its parts as they become whole, and finish when no
                          process holds it open for writing and it has not grown for --follow-idle seconds
                          (default 5). Over native, IETF and S3 (and tus servers offering creation-defer-length);
                          parity and dedup need the whole file and are off. A file that shrinks or is replaced
                          while followed fails (exit 1); nothing is completed from a mix
          --follow-idle S how long a closed file must stay the same size before it counts as finished (seconds)
          --json          one JSON event per line
          --quiet         print nothing but errors
        Running the same command again after an interruption or a crash resumes the earlier attempt and says so.
        Ctrl-C pauses: the state is saved and the command to resume is printed.

        """ + UploadSetup.exitCodesText

    static let options: Set<String> = [
        "protocol", "parallel", "chunk-size", "part-size", "max-rate", "congestion", "pin", "token", "token-file",
        "endpoint", "s3-flavor",
        "state-dir", "flags", "trace", "follow-idle", "include", "exclude", "first", "priority", "files", "marker",
    ]
    static let flags: Set<String> = [
        "parity", "json", "quiet", "follow", "follow-symlinks", "one-file-system", "no-batch", "recheck",
    ]

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(arguments, options: options, flags: flags, positionals: 0...2)
        let words = try parsed.positionals(exactly: 2, names: "FILE and DEST")
        guard !words[0].text.isEmpty, !words[1].text.isEmpty else {
            throw Arguments.UsageError(description: "FILE and DEST must not be empty")
        }
        let file = words[0].path
        let destination = words[1].text
        let forced = try parsed.value("protocol", expected: "one of native, ietf, tus, s3") {
            try TransportMode(name: $0)
        }
        var configuration = try UploadRun.configuration(parsed)
        try UploadSetup.checkTokenOptions(parsed)
        if (try? Syscall.stat(file))?.isDirectory == true {
            return try await UploadCapture.run(
                directory: file, destination: destination, forced: forced, endpoint: parsed.option("endpoint"),
                flavor: try UploadSetup.s3Flavor(parsed, destination: destination), configuration: configuration,
                arguments: parsed)
        }
        try UploadCapture.checkFileOptions(parsed)
        if file.lastComponent.isValidUTF8 {
            // tus servers such as tuspyserver require a file name in Upload-Metadata.
            configuration.metadata["filename"] = String(decoding: file.lastComponent.bytes, as: UTF8.self)
        }
        let canonical = try UploadJob.canonical(file)
        let key = SnapshotKey.derive(canonicalPath: canonical, destination: destination)
        let follow = try UploadRun.followOptions(parsed, configuration: &configuration)
        return try await UploadRun.run(
            file: file, destination: destination, forced: forced, endpoint: parsed.option("endpoint"),
            flavor: try UploadSetup.s3Flavor(parsed, destination: destination), key: key,
            configuration: configuration, arguments: parsed, follow: follow)
    }
}

/// The part of `upload` that `resume` shares.
enum UploadRun {
    static func configuration(_ parsed: Arguments) throws -> UploadConfiguration {
        var configuration = UploadConfiguration(parity: parsed.flag("parity"), contentType: "application/octet-stream")
        if let list = parsed.option("flags") { configuration.flags = try FeatureFlags(parsing: list) }
        if parsed.option("parallel") != nil {
            configuration.parallel = try parsed.integer("parallel", default: 1, in: 1...64)
        }
        if parsed.option("max-rate") != nil {
            configuration.maximumBytesPerSecond = Int64(try parsed.integer("max-rate", default: 1, in: 1...(1 << 40)))
        }
        if parsed.option("chunk-size") != nil {
            configuration.chunkSize = try parsed.integer("chunk-size", default: 1, in: 1...(256 << 20))
        }
        if parsed.option("part-size") != nil {
            configuration.partSize = try parsed.integer("part-size", default: 1, in: 1...(256 << 20))
        }
        return configuration
    }

    static func run(
        file: FilePath, destination: String, forced: TransportMode?, endpoint: String?, flavor: S3Flavor? = nil,
        key: String, configuration: UploadConfiguration, arguments: Arguments, follow: FollowOptions? = nil
    ) async throws -> Int32 {
        let view = UploadProgressView(id: key, json: arguments.flag("json"), quiet: arguments.flag("quiet"))
        var options = UploadJob.Options(
            configuration: configuration,
            client: try UploadSetup.clientConfiguration(
                arguments, maximumSendRate: configuration.maximumBytesPerSecond),
            forcedProtocol: forced, stateDirectory: arguments.path("state-dir"), follow: follow,
            traceFile: arguments.path("trace"))
        options.detection.s3Endpoint = endpoint
        options.detection.s3Flavor = flavor
        if let token = try UploadSetup.token(arguments) { options.bearerToken(token) }
        let job = UploadJob(file: file, destination: destination, key: key, options: options)
        let task = Task {
            try await job.run { event in
                if case .destination = event, let follow {
                    view.note(
                        "following \(file) until it is closed and idle for "
                            + "\(UploadProgressView.oneDecimal(follow.idleSeconds)) s (parity and dedup are off: they "
                            + "need the whole file)")
                }
                view.handle(event)
            }
        }
        let signals = UploadSignals { task.cancel() }
        defer { signals.stop() }
        let ended = await task.result
        do {
            _ = try ended.get()
            return UploadSetup.Exit.done
        } catch let error as UploaderError {
            view.finishBar()
            switch error.code {
            case .cancelled:
                // Stopped before the destination created the upload (digesting the file, or the creation itself):
                // nothing is kept, so `aether resume` would not find it; the same command starts it again.
                let kept =
                    (try? UploadSetup.store(arguments).load(key: key)) != nil
                let hint =
                    kept
                    ? "paused; resume with: aether resume \(key)"
                        + (arguments.option("state-dir").map { " --state-dir \($0)" } ?? "")
                    : "stopped before the destination created it; nothing is kept: run the same command to start it"
                if view.mode == .json {
                    view.json(EventJSON(event: "paused", id: key, message: hint, exit: UploadSetup.Exit.paused))
                } else {
                    StandardError.write(
                        "aether: upload \(key) \(hint)\(kept ? " (or run the same command again)" : "")\n")
                }
                return UploadSetup.Exit.paused
            case .verificationFailed:
                report(error, view: view, exit: UploadSetup.Exit.verificationFailed)
                return UploadSetup.Exit.verificationFailed
            default:
                report(error, view: view, exit: UploadSetup.Exit.failed)
                return UploadSetup.Exit.failed
            }
        } catch {
            // The probe failed (the destination is down or never answers): `--json` readers get the `failed`
            // event too; the line on standard error comes from the caller.
            if view.mode == .json {
                view.json(
                    EventJSON(
                        event: "failed", id: key, message: FailureAdvice.line(for: error), exit: UploadSetup.Exit.failed
                    ))
            }
            throw error
        }
    }

    static func report(_ error: UploaderError, view: UploadProgressView, exit: Int32) {
        var line = FailureAdvice.line(for: error)
        if error.code == .verificationFailed {
            // The state is kept (a later run fails the same way, see ResumeSnapshot.receiptMismatch): say how to
            // remove both.
            line =
                "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
                + "; the stored object is not this file: remove it and the kept state with `aether cancel \(view.id)`, "
                + "then upload again"
        }
        if view.mode == .json {
            view.json(EventJSON(event: "failed", id: view.id, message: line, exit: exit))
        }
        StandardError.write("aether upload: \(line)\n")
    }
}

/// Turns SIGINT and SIGTERM into a pause: the handler runs once, on a dispatch queue, and the default action is
/// restored when the upload ends.
final class UploadSignals {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable () -> Void) {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            _ = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    func stop() {
        for source in sources { source.cancel() }
        _ = signal(SIGINT, SIG_DFL)
        _ = signal(SIGTERM, SIG_DFL)
    }
}
