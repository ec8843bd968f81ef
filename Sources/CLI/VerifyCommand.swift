import AetherIO
import AetherIntegrity
import AetherUploader
import Foundation

/// `aether verify FILE MANIFEST.json`
enum VerifyCommand: CLICommand {
    static let name = "verify"
    static let summary =
        "verify a file against its manifest (naming the first bad chunk), or a folder against its capture's"
    static let usage = """
        usage: aether verify FILE MANIFEST.json
               aether verify DIR CAPTURE-MANIFEST.json [--destination [--token T | --token-file F]]
          Reads FILE once in the manifest's chunk size and checks every chunk's length, SHA-256 and
          CRC32C, then the whole-file SHA-256. The manifest itself is checked first (format, chunk
          count, Merkle root and chain head recomputed from its chunk hashes, CID). Exit 0 when the
          file is intact; 1 naming the first bad chunk, or when the manifest is invalid.
          FILE and MANIFEST.json must be regular files; a manifest larger than any manifest of FILE
          can be (about 256 bytes per 4 KiB of FILE) is refused before it is read.
          With DIR: the capture's manifest (.aether-capture.json, as aether upload DIR stored it) is
          checked first (format, paths, the root recomputed from its files); then DIR is walked as a
          capture walks it and each listed file read once, its size and SHA-256 compared. Prints each
          file that is missing, of another size or other bytes, and each file of DIR the manifest does
          not list. Exit 0 when every listed file is intact (unlisted files are named, not failed); 1
          otherwise, or when the manifest is invalid.
          --destination  with DIR: also ask the destination the manifest names for each intact file:
                         its upload must be complete and of the manifest's size, and the receiver must
                         prove it holds the bytes (a spot check: MACs over sampled ranges of the stored
                         bytes judged against DIR's, Merkle proofs to the manifest's root). Prints each
                         file not held, failed or not checkable (only a native receiver can prove what it
                         holds); exit 0 only when every listed file is intact and proven held.
          --token T, --token-file F  the receiver's bearer token, as aether upload takes it
        """

    /// Stops the read at the first bad chunk.
    private struct StopReading: Error {}

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(
            arguments, options: ["token", "token-file"], flags: ["destination"], positionals: 2...2)
        let positionals = try parsed.positionals(exactly: 2, names: "FILE and MANIFEST.json")
        let (path, manifestPath) = (positionals[0].path, positionals[1].path)
        if (try? Syscall.stat(path))?.isDirectory == true {
            return try await folder(path, manifest: manifestPath, arguments: parsed)
        }
        if parsed.flag("destination") || parsed.option("token") != nil || parsed.option("token-file") != nil {
            throw Arguments.UsageError(description: "--destination, --token and --token-file go with a folder (DIR)")
        }
        // The file is opened first: its size bounds how much of the manifest is read.
        let file = try GuardedFile(path: path)
        let limit = FileManifest.maximumManifestBytes(fileSize: file.identity.size)
        let bytes: [UInt8]
        do {
            bytes = try GuardedFile(path: manifestPath).readAll(maximumBytes: limit)
        } catch {
            guard error.code == .invalidArgument else { throw error }
            throw IntegrityError(
                .malformedManifest,
                "\(manifestPath) is larger than any manifest of \(path) (\(file.identity.size) bytes) can be")
        }
        let manifest = try VerifiedManifest.parse(Data(bytes))
        guard FileManifest.chunkSizeRange.contains(manifest.chunkSize) else {
            throw IntegrityError(
                .malformedManifest,
                "chunk size \(manifest.chunkSize) is outside \(FileManifest.chunkSizeRange) (aether digest's range)")
        }
        var verifier = manifest.verifier()
        var firstFailure: (index: Int, reason: ManifestVerificationResult.ChunkMismatch)?
        var fileSHA256: Digest32?
        do {
            let file = try FileDigester.digest(path: path, options: ChunkReadOptions(chunkSize: manifest.chunkSize)) {
                _, digest in
                let actual = ManifestChunk(length: digest.length, sha256: digest.sha256, crc32c: digest.crc32c)
                if case .mismatch(let index, let reason) = verifier.check(actual) {
                    firstFailure = (index, reason)
                    throw StopReading()
                }
            }
            fileSHA256 = file.sha256
        } catch is StopReading {
            // The first bad chunk is known; the rest of the file need not be read.
        }
        let result: ManifestVerificationResult
        if let firstFailure {
            result = .badChunk(index: firstFailure.index, reason: firstFailure.reason)
        } else {
            result = verifier.finish(fileSHA256: fileSHA256)
        }
        switch result {
        case .intact:
            print(
                "intact: \(manifest.chunks.count) chunks, sha256 \(manifest.fileSHA256.hex), cid \(manifest.cid.string)"
            )
            return ExitStatus.success
        case .badChunk(let index, let reason):
            let offset = Int64(index) * Int64(manifest.chunkSize)
            print("bad chunk \(index) at offset \(offset): \(describe(reason))")
            return ExitStatus.failure
        case .fileDigestMismatch:
            print("every chunk matched but the whole-file SHA-256 did not")
            return ExitStatus.failure
        }
    }

    /// `aether verify DIR CAPTURE-MANIFEST.json`.
    private static func folder(_ directory: FilePath, manifest path: FilePath, arguments: Arguments) async throws
        -> Int32
    {
        if !arguments.flag("destination"), arguments.option("token") != nil || arguments.option("token-file") != nil {
            throw Arguments.UsageError(description: "--token and --token-file go with --destination")
        }
        let token = try UploadSetup.token(arguments)
        let bytes: [UInt8]
        do {
            bytes = try GuardedFile(path: path).readAll(maximumBytes: CaptureManifest.maximumBytes)
        } catch {
            guard error.code == .invalidArgument else { throw error }
            throw IntegrityError(
                .malformedManifest,
                "\(path) is larger than a capture manifest may be (\(CaptureManifest.maximumBytes >> 20) MiB)")
        }
        let manifest = try CaptureManifest.parse(bytes)
        let result = try manifest.verify(directory: directory)
        for (file, problem) in result.problems {
            let shown = TerminalText.safe(file)
            switch problem {
            case .missing: print("missing: \(shown)")
            case .sizeDiffers(let expected, let actual):
                print("size differs: \(shown): \(actual) bytes, the manifest says \(expected)")
            case .contentDiffers: print("content differs: \(shown): its SHA-256 is not the manifest's")
            case .unreadable(let message): print("unreadable: \(shown): \(TerminalText.safe(message))")
            }
        }
        for file in result.unlisted {
            print("not in the manifest: \(TerminalText.safe(String(decoding: file, as: UTF8.self)))")
        }
        let unlisted = result.unlisted.isEmpty ? "" : ", \(result.unlisted.count) not in the manifest"
        if result.isIntact {
            print("intact: \(result.intact) files, root \(manifest.root.hex)\(unlisted)")
        } else {
            print("\(result.problems.count) of \(manifest.files.count) files differ from the manifest\(unlisted)")
        }
        guard arguments.flag("destination") else { return result.isIntact ? ExitStatus.success : ExitStatus.failure }
        let held = try await destination(manifest, directory: directory, local: result, token: token)
        return result.isIntact && held ? ExitStatus.success : ExitStatus.failure
    }

    /// The `--destination` check: a private state directory for the check's key (removed after), then each file's
    /// standing at the destination.
    private static func destination(
        _ manifest: CaptureManifest, directory: FilePath, local: CaptureVerification, token: String?
    ) async throws -> Bool {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-verify-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(
            atPath: state, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: state) }
        var options = UploadJob.Options(stateDirectory: FilePath(state))
        if let token { options.bearerToken(token) }
        let check = try await manifest.verifyAtDestination(directory: directory, local: local, options: options)
        var bytes: Int64 = 0
        for (file, standing) in check.files {
            let shown = TerminalText.safe(file)
            switch standing {
            case .held(let checked): bytes += checked
            case .notHeld(let why): print("not held at the destination: \(shown): \(TerminalText.safe(why))")
            case .failed(let why): print("failed at the destination: \(shown): \(TerminalText.safe(why))")
            case .notChecked(let why): print("not checked at the destination: \(shown): \(TerminalText.safe(why))")
            }
        }
        if check.isHeld {
            print("held at the destination: \(check.held) files, proven by spot checks over \(bytes) bytes")
        } else {
            print("\(check.files.count - check.held) of \(check.files.count) files not proven held at the destination")
        }
        return check.isHeld
    }

    private static func describe(_ reason: ManifestVerificationResult.ChunkMismatch) -> String {
        switch reason {
        case .length(let expected, let actual): "length \(actual), manifest says \(expected)"
        case .sha256: "SHA-256 differs from the manifest"
        case .crc32c: "CRC32C differs from the manifest (SHA-256 matched)"
        case .missing: "the file ends before this chunk"
        case .unexpected: "the file is longer than the manifest says"
        }
    }
}
