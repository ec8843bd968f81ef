import AetherCoding
import AetherIO
import AetherIntegrity
import AetherReceiver
import AetherTransport
import AetherUploader

#if canImport(Glibc)
    import Glibc
#endif

/// The `aether` command-line tool.
///
/// The rules every command follows, enforced here once: `-h`/`--help` anywhere before `--` prints
/// the command's usage on standard output and exits 0 (nothing else runs: no listener starts, no file
/// is read); a usage mistake (unknown option or argument, malformed value) exits 2 with the usage; a
/// failure exits 1 with one line naming the cause and the next step.
@main
struct AetherCLI {
    /// Every subcommand, in the order `aether help` lists them.
    static let commands: [any CLICommand.Type] = [
        DigestCommand.self,
        VerifyCommand.self,
        ECCommand.self,
        SessionCommand.self,
        PinCommand.self,
        UploadCommand.self,
        UploadStatusCommand.self,
        UploadResumeCommand.self,
        UploadCancelCommand.self,
        ServeCommand.self,
        DemoCommand.self,
        HelpCommand.self,
    ]

    static func main() async {
        let arguments = Array(argumentWords().dropFirst())
        guard let name = arguments.first else {
            StandardError.write(HelpCommand.overview)
            exit(ExitStatus.usage)
        }
        if name.text == "-h" || name.text == "--help" {
            StandardOutput.write(HelpCommand.overview)
            exit(ExitStatus.success)
        }
        guard let command = commands.first(where: { $0.name == name.text }) else {
            StandardError.write("aether: unknown command \(name)\n\n" + HelpCommand.overview)
            exit(ExitStatus.usage)
        }
        let rest = Array(arguments.dropFirst())
        if Arguments.asksForHelp(rest) {
            StandardOutput.write(command.usage + "\n")
            exit(ExitStatus.success)
        }
        do {
            exit(try await command.run(rest))
        } catch let error as Arguments.UsageError {
            StandardError.write("aether \(command.name): \(error.description)\n\n\(command.usage)\n")
            exit(ExitStatus.usage)
        } catch {
            StandardError.write("aether \(command.name): \(FailureAdvice.line(for: error, command: command.name))\n")
            exit(ExitStatus.failure)
        }
    }

    /// `argv` as bytes: `CommandLine.arguments` repairs invalid UTF-8, which would change file names.
    static func argumentWords() -> [Word] {
        var words: [Word] = []
        for index in 0..<Int(CommandLine.argc) {
            guard let pointer = unsafe CommandLine.unsafeArgv[index] else { continue }
            let length = unsafe strlen(pointer)
            let bytes = unsafe UnsafeRawBufferPointer(start: pointer, count: length)
            words.append(Word(bytes: unsafe Array(bytes)))
        }
        return words
    }
}

/// `aether help [COMMAND]`
enum HelpCommand: CLICommand {
    static let name = "help"
    static let summary = "show the commands, or one command's usage"
    static let usage = "usage: aether help [COMMAND]\n       aether COMMAND -h | --help"

    static var overview: String {
        var text = "usage: aether COMMAND [ARGUMENTS]   (aether COMMAND --help for its usage)\n\ncommands:\n"
        for command in AetherCLI.commands {
            text +=
                "  " + command.name + String(repeating: " ", count: max(1, 10 - command.name.count)) + command.summary
                + "\n"
        }
        return text
    }

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(arguments, positionals: 0...1)
        if let name = parsed.positionals.first {
            guard let command = AetherCLI.commands.first(where: { $0.name == name.text }) else {
                throw Arguments.UsageError(description: "no command named \(name)")
            }
            StandardOutput.write(command.usage + "\n")
        } else {
            StandardOutput.write(overview)
        }
        return ExitStatus.success
    }
}

/// One line for a failure: the cause (the error's own text, on one line) and the next step.
enum FailureAdvice {
    /// `command` names the usage the step points to (`aether help COMMAND`).
    static func line(for error: any Error, command: String = "upload") -> String {
        let cause = "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
        guard let step = nextStep(for: error, command: command) else { return cause }
        return cause + "; " + step
    }

    static func nextStep(for error: any Error, command: String = "upload") -> String? {
        if let error = error as? IOError {
            switch error.code {
            case .fileChanged: return "run again once nothing writes the file"
            case .notARegularFile: return "give a regular file"
            case .outputIsInput: return "write the output to another path"
            case .unexpectedEndOfFile: return "check the file is complete"
            default: return error.errno.flatMap(errnoStep)
            }
        }
        if let error = error as? CodingError {
            switch error.code {
            case .fileChanged: return "run again once nothing writes the file"
            case .notARegularFile:
                return "give regular files: the input, index.json, the shards and any existing output"
            case .outputIsInput: return "write the output to another path"
            case .tooFewShards, .shardSizeMismatch: return "restore more shards from a copy"
            case .malformedIndex: return "restore index.json from a copy, or encode the file again"
            case .verificationFailed: return "restore the shards and index.json from a good copy"
            case .fileSystem: return errnoStep(in: error.message)
            default: return nil
            }
        }
        if let error = error as? ReceiverError { return receiverStep(error) }
        if let error = error as? UploaderError { return uploadStep(error, command: command) }
        if let error = error as? TransportError { return transportStep(error, command: command) }
        if let error = error as? IntegrityError, error.message.contains("capture manifest") {
            return "take the manifest again from the state directory (aether status lists it) or from the"
                + " destination's .aether-capture.json"
        }
        if let error = error as? IntegrityError, error.code == .malformedManifest {
            return "make the manifest again with aether digest FILE --manifest OUT.json"
        }
        return nil
    }

    /// The next step when this process ran out of file descriptors.
    static let openFileLimitStep =
        "raise the open-file limit (ulimit -n) or lower --parallel (and --files for a folder), then run the same"
        + " command again"

    static func uploadStep(_ error: UploaderError, command: String = "upload") -> String? {
        if let code = error.errno, code == EMFILE || code == ENFILE { return openFileLimitStep }
        if let code = error.errno, code == ENOSPC || code == EDQUOT {
            return "free some space where it says (the state directory, --state-dir, keeps a few KiB for each upload),"
                + " then run the same command again"
        }
        return switch error.code {
        // A transport message that names its own next step (a full receiver, a refused token) keeps it alone.
        case .transportFailed where error.message.contains("then run the same command again"): nil
        case .transportFailed, .circuitOpen:
            "check the destination and the network, then run the same command again to resume"
        case .fileChanged: "run again once nothing writes the file (the upload starts over)"
        case .readFailed: "check the file and its permissions"
        case .snapshotDamaged, .snapshotUnavailable: "check the state directory (--state-dir)"
        case .verificationFailed: "the stored object is not this file: remove it at the destination and upload again"
        case .invalidArgument: "check the arguments (aether help \(command))"
        case .fileTruncated, .fileReplaced: "upload the file again once it is written (without --follow if it is done)"
        case .followUnsupported: "upload without --follow once the file is written, or choose native, IETF or S3"
        default: nil
        }
    }

    /// `aether serve`'s failures to start: the store, the catalogue, the limits of this process.
    static func receiverStep(_ error: ReceiverError) -> String? {
        let damaged = ["file is not a database", "database disk image is malformed"]
        if damaged.contains(where: { error.message.contains($0) }) {
            return "the catalogue (catalog.sqlite3 in --dir) is damaged: restore it from a backup (the stored objects"
                + " are plain files under objects/ and stay as they are)"
        }
        return switch error.errno {
        case .some(ENOTDIR): "give --dir a directory (or a path that does not exist yet)"
        case .some(let code): errnoStep(code)
        case nil: nil
        }
    }

    static func transportStep(_ error: TransportError, command: String = "upload") -> String? {
        if let code = error.errno, code == EMFILE || code == ENFILE { return openFileLimitStep }
        return switch error.code {
        case .accessDenied, .credentialsUnavailable: "check the token or credentials"
        case .protocolUnsupported: "choose another --protocol or destination"
        case .invalidArgument: "check the destination and the arguments (aether help \(command))"
        case .connectionRefused, .hostNotFound, .timedOut: "check the destination is up and reachable"
        case .pinMismatch, .certificateRejected, .tlsHandshakeFailed: "check the server certificate and --pin"
        default: nil
        }
    }

    private static func errnoStep(in message: String) -> String? {
        // CodingError messages end "... (errno N)".
        guard message.hasSuffix(")"), let open = message.lastIndex(of: "(") else { return nil }
        let inside = message[message.index(after: open)..<message.index(before: message.endIndex)]
        guard inside.hasPrefix("errno "), let code = Int32(inside.dropFirst(6)) else { return nil }
        return errnoStep(code)
    }

    private static func errnoStep(_ code: Int32) -> String? {
        switch code {
        case ENOENT: "check the path"
        case EACCES, EPERM: "check the permissions"
        case EMFILE, ENFILE: "raise the open-file limit (ulimit -n)"
        case ENOSPC, EDQUOT: "free some space"
        case EWOULDBLOCK: "another process holds the file; wait for it"
        case EROFS: "write to a writable file system"
        default: nil
        }
    }
}

/// Writes to standard error. Every message is shown through `TerminalText` (line breaks kept): messages quote file
/// names and destinations' answers. `control` (the progress bar's line clearing) is written as it is, first.
enum StandardError {
    static func write(_ text: String, control: String = "") {
        var bytes = Array((control + TerminalText.safe(text, keepingLineBreaks: true)).utf8)
        unsafe bytes.withUnsafeMutableBytes { raw in
            _ = unsafe Glibc.write(2, raw.baseAddress, raw.count)
        }
    }
}
