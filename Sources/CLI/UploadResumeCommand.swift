import AetherIO
import AetherTransport
import AetherUploader

/// `aether resume ID`: continues a kept upload with the file, destination and protocol it was started with.
enum UploadResumeCommand: CLICommand {
    static let name = "resume"
    static let summary = "continue a paused or interrupted upload by its id"
    static let usage = """
        usage: aether resume ID [--parallel N] [--max-rate N] [--congestion C] [--pin SHA256]
                                [--token T | --token-file F] [--s3-flavor F]
                                [--state-dir D] [--flags LIST] [--follow-idle SECONDS] [--json] [--quiet]
          ID   the upload's id (aether upload and aether status print it); the token is not kept: give it again
          --max-rate N caps the rate as with aether upload (it is not kept either); --congestion and
          --s3-flavor too (without it the endpoint's flavor, as aether upload finds it)
          an upload started with --follow is followed again (--follow-idle as with aether upload)

        """ + UploadSetup.exitCodesText

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(
            arguments,
            options: [
                "parallel", "max-rate", "congestion", "pin", "token", "token-file", "state-dir", "flags", "follow-idle",
                "s3-flavor",
            ],
            flags: ["json", "quiet"],
            positionals: 0...1)
        let id = try parsed.positionals(exactly: 1, names: "ID")[0].text
        let snapshot = try UploadKept.snapshot(id: id, parsed)
        var configuration = try UploadRun.configuration(parsed)
        configuration.chunkSize = Int(snapshot.partSize)
        let file = try FilePath(bytes: snapshot.filePath)
        if file.lastComponent.isValidUTF8 {
            configuration.metadata["filename"] = String(decoding: file.lastComponent.bytes, as: UTF8.self)
        }
        // A followed upload (created without its size) is followed again, as the same `aether upload --follow` would.
        let follow =
            snapshot.remote.sizeDeferred == true
            ? try UploadRun.followOptions(parsed, configuration: &configuration, followed: true) : nil
        if follow == nil, parsed.option("follow-idle") != nil {
            throw Arguments.UsageError(description: "--follow-idle applies only to an upload started with --follow")
        }
        return try await UploadRun.run(
            file: file, destination: snapshot.destination,
            forced: snapshot.mode, endpoint: snapshot.endpoint,
            flavor: try UploadSetup.s3Flavor(parsed, destination: snapshot.destination), key: id,
            configuration: configuration, arguments: parsed, follow: follow)
    }
}

/// `aether cancel ID`: abandons a kept upload at the destination and removes its state.
enum UploadCancelCommand: CLICommand {
    static let name = "cancel"
    static let summary = "abandon a kept upload (the destination drops it) and forget its state"
    static let usage = """
        usage: aether cancel ID [--pin SHA256] [--token T | --token-file F] [--state-dir D]
          ID   the upload's id (aether status lists them)
        exit status: 0 cancelled, 1 the destination could not be told (the state is kept; run it again),
                     2 the command line was wrong
        """

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(
            arguments, options: ["pin", "token", "token-file", "state-dir"], flags: [], positionals: 0...1)
        let id = try parsed.positionals(exactly: 1, names: "ID")[0].text
        let lock = try UploadSetup.lock(parsed, key: id)
        defer { withExtendedLifetime(lock) {} }
        let snapshot = try UploadKept.snapshot(id: id, parsed)
        let client = try UploadSetup.client(parsed)
        defer { client.shutDown() }
        let detected = try await UploadSetup.backend(
            destination: snapshot.destination, forced: snapshot.mode,
            endpoint: snapshot.endpoint, token: try UploadSetup.token(parsed), client: client)
        do {
            try await detected.backend.abort(snapshot.remote)
        } catch {
            // Already gone at the destination: only the local state is left.
            guard error.code == .gone else { throw error }
        }
        try UploadSetup.store(parsed).remove(key: id)
        StandardOutput.write("cancelled \(id)\n")
        return ExitStatus.success
    }
}

enum UploadKept {
    /// The kept snapshot of `id`, or an error naming what to do.
    static func snapshot(id: String, _ parsed: Arguments) throws -> ResumeSnapshot {
        guard let bytes = try UploadSetup.store(parsed).load(key: id) else {
            throw UploaderError(.invalidArgument, "no kept upload has the id \(id); aether status lists them")
        }
        return try ResumeSnapshot.deserialize(bytes)
    }
}
