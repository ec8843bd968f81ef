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
               aether verify DIR CAPTURE-MANIFEST.json
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
        """

    /// Stops the read at the first bad chunk.
    private struct StopReading: Error {}

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(arguments, positionals: 2...2)
        let positionals = try parsed.positionals(exactly: 2, names: "FILE and MANIFEST.json")
        let (path, manifestPath) = (positionals[0].path, positionals[1].path)
        if (try? Syscall.stat(path))?.isDirectory == true { return try folder(path, manifest: manifestPath) }
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
    private static func folder(_ directory: FilePath, manifest path: FilePath) throws -> Int32 {
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
            return ExitStatus.success
        }
        print("\(result.problems.count) of \(manifest.files.count) files differ from the manifest\(unlisted)")
        return ExitStatus.failure
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
