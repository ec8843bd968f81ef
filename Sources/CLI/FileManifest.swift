import AetherIO
import AetherIntegrity
import Foundation

/// Reads a file once and builds its manifest while AetherIO hashes it: each chunk's digest goes to
/// the Merkle tree and commitment chain as it is produced, so memory stays at the read pool.
enum FileManifest {
    /// The commitment-chain session id of manifests made outside an upload session.
    static let defaultSessionID = "aether-manifest"

    /// The file digest, every chunk digest and the manifest of the file at `path`.
    static func build(path: String, options: ChunkReadOptions, sessionID: String) throws -> (
        file: FileDigest, chunks: [ChunkDigest], manifest: VerifiedManifest
    ) {
        let stream = try FileDigestStream(path: path, options: options)
        var builder = try ManifestBuilder(
            fileSize: UInt64(stream.fingerprint.size), chunkSize: options.chunkSize, sessionID: sessionID)
        var chunks: [ChunkDigest] = []
        chunks.reserveCapacity(builder.expectedChunkCount)
        while let (_, digest) = try stream.next() {
            try builder.append(ManifestChunk(length: digest.length, sha256: digest.sha256, crc32c: digest.crc32c))
            chunks.append(digest)
        }
        let file = try stream.finish()
        return (file, chunks, try builder.finish(fileSHA256: file.sha256))
    }

    /// Writes `manifest` to `path` as canonical JSON, atomically (the old manifest or the new, never a mix).
    static func write(_ manifest: VerifiedManifest, to path: String) throws {
        try AtomicFile.write(manifest.canonicalJSON(), to: path)
    }
}
