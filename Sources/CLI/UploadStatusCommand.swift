import AetherIO
import AetherTransport
import AetherUploader

/// `aether status [ID]`: the uploads whose state is kept (paused, interrupted or failed).
enum UploadStatusCommand: CLICommand {
    static let name = "status"
    static let summary = "list the uploads that can be resumed, or show one"
    static let usage = """
        usage: aether status [ID] [--state-dir D] [--json]
               aether status --summary ID [--state-dir D]
          ID             one upload or capture (as aether upload printed it); without it, every kept upload,
                         then every capture (a folder: its files finished so far, folder and destination)
          --summary ID   print the upload's last exported summary: one JSON line with Laplace noise (epsilon 1.0)
          --state-dir D  where resume state lives (default $XDG_STATE_HOME/aether or ~/.local/state/aether)
          --json         one JSON object per upload or capture and line
        exit status: 0 listed, 1 the state cannot be read or ID is unknown, 2 the command line was wrong
        """

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["state-dir", "summary"], flags: ["json"], positionals: 0...1)
        if let id = parsed.option("summary") {
            let state = try UploadStateDirectory.resolve(override: parsed.path("state-dir"))
            guard let line = try TelemetryRecorder.summary(stateDirectory: state, uploadKey: id) else {
                throw UploaderError(.invalidArgument, "no summary for the id \(id); it is written when an upload ends")
            }
            StandardOutput.write(String(decoding: line, as: UTF8.self))
            return ExitStatus.success
        }
        let store = try UploadSetup.store(parsed)
        var captures = try CaptureJob.kept(
            stateDirectory: UploadStateDirectory.resolve(override: parsed.path("state-dir")))
        var ids = try parsed.positionals.first.map { [$0.text] } ?? store.keys()
        if let id = parsed.positionals.first?.text {
            captures = captures.filter { $0.key == id }
            if try store.load(key: id) == nil {
                guard !captures.isEmpty else {
                    throw UploaderError(
                        .invalidArgument, "no kept upload or capture has the id \(id); aether status lists them")
                }
                ids = []
            }
        }
        if ids.isEmpty, captures.isEmpty, !parsed.flag("json") { StandardOutput.write("no uploads to resume\n") }
        for id in ids {
            let view = UploadProgressView(id: id, json: parsed.flag("json"), quiet: false)
            do {
                guard let bytes = try store.load(key: id) else { continue }
                let snapshot = try ResumeSnapshot.deserialize(bytes)
                let file = FilePath(bytesOrEscaped: snapshot.filePath)
                if parsed.flag("json") {
                    view.json(
                        EventJSON(
                            event: "status", id: id, message: "\(file) -> \(snapshot.destination)",
                            tier: nil, total: snapshot.remote.size, acknowledged: snapshot.acknowledgedBytes,
                            location: snapshot.remote.location, partsSent: snapshot.acknowledged.count))
                } else {
                    StandardOutput.write(
                        "\(id)  \(snapshot.mode)  \(snapshot.acknowledged.count)/\(snapshot.partCount) parts  "
                            + "\(UploadProgressView.bytes(snapshot.acknowledgedBytes))/"
                            + "\(UploadProgressView.bytes(snapshot.remote.size))  "
                            + TerminalText.safe("\(file) -> \(snapshot.destination)") + "\n")
                }
            } catch {
                if parsed.flag("json") {
                    view.json(EventJSON(event: "status", id: id, message: error.message))
                } else {
                    StandardOutput.write("\(id)  unreadable: \(TerminalText.safe(error.message))\n")
                }
            }
        }
        for capture in captures { show(capture, json: parsed.flag("json")) }
        return ExitStatus.success
    }

    /// One capture's line: its files finished so far, its folder and destination.
    static func show(_ capture: CaptureStatus, json: Bool) {
        let folder = capture.directory?.description ?? "(folder not recorded)"
        let destination = capture.destination ?? "(destination not recorded)"
        if json {
            UploadProgressView.writeJSON(
                CaptureJSON(
                    event: "capture", id: capture.key, message: "\(folder) -> \(destination)",
                    files: capture.filesDone, acknowledged: capture.bytesDone,
                    manifest: capture.manifest?.description))
        } else {
            let manifest = capture.manifest.map { "  manifest \($0)" } ?? "  no manifest yet"
            StandardOutput.write(
                "\(capture.key)  capture  \(capture.filesDone) files done  "
                    + "\(UploadProgressView.bytes(capture.bytesDone))  "
                    + TerminalText.safe("\(folder) -> \(destination)\(manifest)") + "\n")
        }
    }
}

extension FilePath {
    /// The path of bytes as stored, or an escaped form when the bytes are not a valid path.
    init(bytesOrEscaped bytes: [UInt8]) {
        self = (try? FilePath(bytes: bytes)) ?? FilePath(String(decoding: bytes, as: UTF8.self))
    }
}
