public import AetherIO

/// Builds a `VerifiedManifest` from a file's chunk digests, fed in order (what `aether digest
/// --manifest` does while AetherIO reads the file). Memory: the chunk list plus O(log n) Merkle
/// nodes and O(√n) jump links.
public struct ManifestBuilder: Sendable {
    /// File size in bytes.
    public let fileSize: UInt64
    /// Chunk size in bytes.
    public let chunkSize: Int
    /// Chunks the file has.
    public let expectedChunkCount: Int
    private var chunks: [ManifestChunk] = []
    private var tree = StreamingMerkleTree()
    private var chain: ChunkCommitmentChain

    /// Starts a manifest for a file of `fileSize` bytes cut into `chunkSize` chunks; `sessionID`
    /// seeds the commitment chain's genesis.
    public init(fileSize: UInt64, chunkSize: Int, sessionID: String) throws(IntegrityError) {
        guard chunkSize > 0 else { throw IntegrityError(.invalidArgument, "chunk size must be positive") }
        guard let count = VerifiedManifest.expectedChunkCount(fileSize: fileSize, chunkSize: chunkSize) else {
            throw IntegrityError(.invalidArgument, "file size and chunk size give more than 2^32 chunks")
        }
        self.fileSize = fileSize
        self.chunkSize = chunkSize
        self.expectedChunkCount = count
        chain = try ChunkCommitmentChain(sessionID: sessionID, plannedChunkCount: count)
    }

    /// Adds the next chunk; `.invalidArgument` when its length is not what the file size implies or
    /// the file already has all its chunks.
    public mutating func append(_ chunk: ManifestChunk) throws(IntegrityError) {
        let index = chunks.count
        guard index < expectedChunkCount else {
            throw IntegrityError(.invalidArgument, "a \(fileSize)-byte file has only \(expectedChunkCount) chunks")
        }
        let expected = VerifiedManifest.expectedLength(index: index, fileSize: fileSize, chunkSize: chunkSize)
        guard chunk.length == expected else {
            throw IntegrityError(.invalidArgument, "chunk \(index) has \(chunk.length) bytes, expected \(expected)")
        }
        try tree.append(chunk.sha256)
        chain.append(chunk.sha256)
        chunks.append(chunk)
    }

    /// Completes the manifest with the whole-file SHA-256; `.invalidArgument` when chunks are missing.
    public func finish(fileSHA256: Digest32) throws(IntegrityError) -> VerifiedManifest {
        guard chunks.count == expectedChunkCount else {
            throw IntegrityError(
                .invalidArgument, "manifest has \(chunks.count) of \(expectedChunkCount) chunks")
        }
        return VerifiedManifest(
            fileSize: fileSize, chunkSize: chunkSize, chunks: chunks, fileSHA256: fileSHA256, merkleRoot: tree.root,
            chainSessionID: chain.sessionID, chainHead: chain.head)
    }
}
