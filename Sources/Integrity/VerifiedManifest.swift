public import AetherIO
public import Foundation

/// A file manifest that passed every consistency check. Only this module makes one: by
/// `ManifestBuilder.finish` from a file's chunk digests, or by `VerifiedManifest.parse` from JSON.
///
/// Canonical JSON (keys sorted, digests in lowercase hex, CRC32C as 8 lowercase hex digits):
/// `chainHead`, `chainSessionID`, `chunkSize`, `chunking` (`"fixed"`), `chunks` (each
/// `{"crc32c", "length", "sha256"}`), `cid`, `fileSHA256`, `fileSize`, `formatVersion` (1), `merkleRoot`.
///
/// Parsing checks: at least 64 bytes; valid JSON with exactly these fields; version 1; fixed
/// chunking (reserved algorithms are `.unsupported`); chunk count = ceil(fileSize / chunkSize);
/// every chunk `chunkSize` long except the last, which holds the remainder; strict hex; the Merkle
/// root and chain head recomputed from the chunk hashes; the CID naming `fileSHA256`.
public struct VerifiedManifest: Sendable, Hashable {
    /// Manifest format version.
    public static let formatVersion = 1
    /// The smallest byte count a manifest can have; shorter input is refused before parsing (BUG-19).
    public static let minimumByteCount = 64

    /// File size in bytes.
    public let fileSize: UInt64
    /// Chunk size in bytes (the last chunk may be shorter).
    public let chunkSize: Int
    /// How the file was chunked.
    public let chunking: ChunkingAlgorithm
    /// Per-chunk digests, in order.
    public let chunks: [ManifestChunk]
    /// SHA-256 of the whole file.
    public let fileSHA256: Digest32
    /// Merkle root over the chunk hashes.
    public let merkleRoot: Digest32
    /// The session id whose genesis starts the commitment chain.
    public let chainSessionID: String
    /// The commitment chain's head over the chunk hashes.
    public let chainHead: Digest32

    /// The file's CIDv1.
    public var cid: CIDv1 { CIDv1(digest: fileSHA256) }
    /// The file's ACI.
    public var aci: ACI { ACI(digest: fileSHA256) }

    init(
        fileSize: UInt64, chunkSize: Int, chunks: [ManifestChunk], fileSHA256: Digest32, merkleRoot: Digest32,
        chainSessionID: String, chainHead: Digest32
    ) {
        self.fileSize = fileSize
        self.chunkSize = chunkSize
        self.chunking = .fixed
        self.chunks = chunks
        self.fileSHA256 = fileSHA256
        self.merkleRoot = merkleRoot
        self.chainSessionID = chainSessionID
        self.chainHead = chainHead
    }

    /// Chunks a file of `fileSize` bytes has at `chunkSize`; nil when the count exceeds 2^32.
    static func expectedChunkCount(fileSize: UInt64, chunkSize: Int) -> Int? {
        let size = UInt64(chunkSize)
        let count = fileSize / size + (fileSize % size == 0 ? 0 : 1)
        return count <= StreamingMerkleTree.maximumLeafCount ? Int(count) : nil
    }

    /// Expected length of chunk `index` of a file of `fileSize` bytes.
    static func expectedLength(index: Int, fileSize: UInt64, chunkSize: Int) -> Int {
        let start = UInt64(index) * UInt64(chunkSize)
        return Int(min(UInt64(chunkSize), fileSize - start))
    }

    /// The canonical JSON bytes. Throws `.serializationFailed`, never returns empty data (BUG-19).
    public func canonicalJSON() throws(IntegrityError) -> Data {
        let document = ManifestDocument(
            chainHead: chainHead.hex, chainSessionID: chainSessionID, chunkSize: chunkSize, chunking: chunking.rawValue,
            chunks: chunks.map {
                ManifestDocument.Chunk(crc32c: Self.crcHex($0.crc32c), length: $0.length, sha256: $0.sha256.hex)
            }, cid: cid.string, fileSHA256: fileSHA256.hex, fileSize: fileSize, formatVersion: Self.formatVersion,
            merkleRoot: merkleRoot.hex)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do { data = try encoder.encode(document) } catch {
            throw IntegrityError(.serializationFailed, "manifest encoding failed: \(error)")
        }
        guard data.count >= Self.minimumByteCount else {
            throw IntegrityError(.serializationFailed, "manifest encoding produced only \(data.count) bytes")
        }
        return data
    }

    /// Parses and checks a manifest (see the type's documentation for every check).
    public static func parse(_ data: Data) throws(IntegrityError) -> VerifiedManifest {
        guard data.count >= minimumByteCount else {
            throw IntegrityError(.malformedManifest, "manifest is too small (\(data.count) bytes, minimum 64)")
        }
        let document: ManifestDocument
        do { document = try JSONDecoder().decode(ManifestDocument.self, from: data) } catch let error as IntegrityError
        {
            throw error
        } catch {
            throw IntegrityError(.malformedManifest, "manifest is not valid JSON of the expected shape: \(error)")
        }
        guard document.formatVersion == formatVersion else {
            throw IntegrityError(.unsupported, "manifest format version \(document.formatVersion) is not supported")
        }
        _ = try ChunkingAlgorithm.parse(document.chunking)
        guard document.chunkSize > 0 else {
            throw IntegrityError(.malformedManifest, "chunk size must be positive, got \(document.chunkSize)")
        }
        guard let count = expectedChunkCount(fileSize: document.fileSize, chunkSize: document.chunkSize) else {
            throw IntegrityError(.malformedManifest, "file size and chunk size give more than 2^32 chunks")
        }
        guard document.chunks.count == count else {
            throw IntegrityError(
                .malformedManifest,
                "\(document.fileSize) bytes at chunk size \(document.chunkSize) make \(count) chunks, manifest lists \(document.chunks.count)"
            )
        }
        var chunks: [ManifestChunk] = []
        chunks.reserveCapacity(count)
        for (index, entry) in document.chunks.enumerated() {
            let expected = expectedLength(index: index, fileSize: document.fileSize, chunkSize: document.chunkSize)
            guard entry.length == expected else {
                throw IntegrityError(
                    .malformedManifest, "chunk \(index) length \(entry.length) does not match the expected \(expected)")
            }
            chunks.append(
                ManifestChunk(
                    length: entry.length, sha256: try field(entry.sha256, "chunk \(index) sha256"),
                    crc32c: try crc(entry.crc32c, index)))
        }
        let fileSHA256 = try field(document.fileSHA256, "fileSHA256")
        let cid = try CIDv1(string: document.cid)
        guard cid.digest == fileSHA256 else {
            throw IntegrityError(.digestMismatch, "manifest CID does not name fileSHA256")
        }
        let merkleRoot = try field(document.merkleRoot, "merkleRoot")
        let chainHead = try field(document.chainHead, "chainHead")
        let (computedRoot, computedHead) = try commitments(chunks, sessionID: document.chainSessionID)
        guard computedRoot == merkleRoot else {
            throw IntegrityError(.digestMismatch, "manifest Merkle root does not match its chunk hashes")
        }
        guard computedHead == chainHead else {
            throw IntegrityError(.digestMismatch, "manifest chain head does not match its chunk hashes")
        }
        return VerifiedManifest(
            fileSize: document.fileSize, chunkSize: document.chunkSize, chunks: chunks, fileSHA256: fileSHA256,
            merkleRoot: merkleRoot, chainSessionID: document.chainSessionID, chainHead: chainHead)
    }

    /// The Merkle root and chain head over `chunks`.
    static func commitments(_ chunks: [ManifestChunk], sessionID: String) throws(IntegrityError) -> (Digest32, Digest32)
    {
        var tree = StreamingMerkleTree()
        var chain = try ChunkCommitmentChain(sessionID: sessionID, plannedChunkCount: chunks.count)
        for chunk in chunks {
            try tree.append(chunk.sha256)
            chain.append(chunk.sha256)
        }
        return (tree.root, chain.head)
    }

    /// A verifier that checks a file's chunks, in order, against this manifest.
    public func verifier() -> ManifestVerifier { ManifestVerifier(manifest: self) }

    /// Checks a whole sequence of chunk digests (and optionally the whole-file SHA-256) against this manifest.
    public func verify(chunks actual: some Sequence<ManifestChunk>, fileSHA256 actualFile: Digest32? = nil)
        -> ManifestVerificationResult
    {
        var verifier = verifier()
        for chunk in actual {
            if case .mismatch(let index, let reason) = verifier.check(chunk) {
                return .badChunk(index: index, reason: reason)
            }
        }
        return verifier.finish(fileSHA256: actualFile)
    }

    static func crcHex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    private static func field(_ text: String, _ name: String) throws(IntegrityError) -> Digest32 {
        do { return try DigestHex.parse(text) } catch {
            throw IntegrityError(.malformedManifest, "\(name) is not 64 lowercase hex digits")
        }
    }

    private static func crc(_ text: String, _ index: Int) throws(IntegrityError) -> UInt32 {
        guard text.utf8.count == 8, let bytes = try? Hex.decodeLowercase(text) else {
            throw IntegrityError(.malformedManifest, "chunk \(index) crc32c is not 8 lowercase hex digits")
        }
        return bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
