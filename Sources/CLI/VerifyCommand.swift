import AetherIO
import AetherIntegrity
import Foundation

/// `aether verify FILE MANIFEST.json`
enum VerifyCommand: CLICommand {
    static let name = "verify"
    static let summary = "verify a file against its manifest, naming the first bad chunk"
    static let usage = """
        usage: aether verify FILE MANIFEST.json
          Reads FILE once in the manifest's chunk size and checks every chunk's length, SHA-256 and
          CRC32C, then the whole-file SHA-256. The manifest itself is checked first (format, chunk
          count, Merkle root and chain head recomputed from its chunk hashes, CID). Exit 0 when the
          file is intact; 1 naming the first bad chunk, or when the manifest is invalid.
          FILE and MANIFEST.json must be regular files; a manifest larger than any manifest of FILE
          can be (about 256 bytes per 4 KiB of FILE) is refused before it is read.
        """

    /// Stops the read at the first bad chunk.
    private struct StopReading: Error {}

    static func run(_ arguments: [Word]) async throws -> Int32 {
        let parsed = try Arguments(arguments, positionals: 2...2)
        let positionals = try parsed.positionals(exactly: 2, names: "FILE and MANIFEST.json")
        let (path, manifestPath) = (positionals[0].path, positionals[1].path)
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
