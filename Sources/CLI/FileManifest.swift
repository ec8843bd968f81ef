import AetherIO
import AetherIntegrity
import Foundation

/// Reads a file once and builds its manifest while AetherIO hashes it: each chunk's digest goes to
/// the Merkle tree and commitment chain as it is produced, so memory stays at the read pool plus
/// the per-chunk digests the manifest lists.
enum FileManifest {
    /// The commitment-chain session id of manifests made outside an upload session.
    static let defaultSessionID = "aether-manifest"

    /// The smallest chunk size the command line accepts: with 4 KiB chunks the per-chunk digests (about
    /// 200 bytes each, in the manifest and the report) stay near 5% of the file, where 1-byte chunks
    /// made a 1 MiB file cost a gigabyte.
    static let minimumChunkSize = 4 << 10

    /// The chunk sizes the command line accepts.
    static let chunkSizeRange = minimumChunkSize...ChunkReadOptions.chunkSizeRange.upperBound

    /// The file digest, every chunk digest and the manifest of the file at `path`.
    static func build(path: FilePath, options: ChunkReadOptions, sessionID: String) throws -> (
        file: FileDigest, chunks: [ChunkDigest], manifest: VerifiedManifest, identity: FileIdentity
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
        return (file, chunks, try builder.finish(fileSHA256: file.sha256), stream.reader.identity)
    }

    /// Writes `manifest` to `path` as canonical JSON, atomically (the old manifest or the new, never a
    /// mix), after checking that `path` is not `input` (nor a link to it).
    static func write(_ manifest: VerifiedManifest, to path: FilePath, input: FileIdentity) throws {
        try OutputGuard.check(output: path, inputs: [input])
        try AtomicFile.write(manifest.canonicalJSON(), to: path)
    }

    /// The largest manifest `aether verify` reads for a file of `fileSize` bytes: a header, and at most
    /// one entry per 4 KiB of file (the smallest chunk size), each far under 256 bytes. Memory for the
    /// check is so bounded by the file, not by whatever the manifest claims.
    static func maximumManifestBytes(fileSize: Int64) -> Int {
        let entries = Int(min(fileSize, Int64(Int.max / 2)) / Int64(minimumChunkSize)) + 1
        let (bytes, overflow) = entries.multipliedReportingOverflow(by: 256)
        return overflow ? Int.max / 2 : (64 << 10) + bytes
    }
}
