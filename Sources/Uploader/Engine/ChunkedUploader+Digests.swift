import AetherIO
import AetherTransport
import Dispatch

extension ChunkedUploader {
    /// A part's SHA-256 and CRC32C as it is read for sending. When the dedup pre-pass digested this same file
    /// (same inode, size and modification time) they are taken from it, so each byte is hashed once per upload;
    /// the reader's guard still fails a file that changes, and the receiver checks every part against them.
    /// Otherwise they are computed now, with the whole file's SHA-256 fed from the same bytes.
    static func digest(of chunk: Chunk, run: inout RunState) -> (sha256: Digest32, crc32c: UInt32) {
        let hasher = run.hasher
        guard let prePass = run.prePass else {
            let digest = twoLaneDigest(chunk, hasher: hasher, file: &run.fileHash)
            return (digest.sha256, digest.crc32c)
        }
        guard chunk.index < prePass.chunkHashes.count, chunk.index < prePass.parts.count,
            prePass.parts[chunk.index].length == Int64(chunk.count),
            let crc32c = prePass.parts[chunk.index].checksumCRC32C
        else {
            // Not the file the pre-pass read (the ledger's part count check then fails the upload as changed).
            let digest = unsafe chunk.withUnsafeBytes { bytes in
                unsafe hasher.digest(index: chunk.index, offset: chunk.offset, bytes: bytes)
            }
            return (digest.sha256, digest.crc32c)
        }
        return (prePass.chunkHashes[chunk.index], crc32c)
    }

    /// Parts from this size are hashed on two threads; below it the hand-off costs more than it saves.
    static let twoLaneMinimum = 1 << 20

    /// The chunk's SHA-256 + CRC32C, and `file` fed with the same bytes: two SHA-256 streams over one buffer, run
    /// side by side on two threads (they are independent; SHA-256 itself cannot be split). On the dedup pre-pass
    /// nothing else runs yet (the receiver waits for the creation), so this halves the time before the first send.
    static func twoLaneDigest(_ chunk: Chunk, hasher: ChunkHasher, file: inout SHA256) -> ChunkDigest {
        guard chunk.count >= twoLaneMinimum else {
            return unsafe chunk.withUnsafeBytes { bytes in
                unsafe file.update(bytes)
                return unsafe hasher.digest(index: chunk.index, offset: chunk.offset, bytes: bytes)
            }
        }
        let result = unsafe chunk.withUnsafeBytes { bytes in
            let lanes = unsafe TwoLanes(file: file, hasher: hasher, chunk: chunk, bytes: bytes)
            DispatchQueue.concurrentPerform(iterations: 2) { lane in unsafe lanes.run(lane) }
            return unsafe (lanes.file, lanes.digest)
        }
        file = result.0
        return result.1
    }
}

/// The two lanes of `twoLaneDigest`: lane 0 feeds `file`, lane 1 computes `digest`, over the same bytes.
@unsafe private final class TwoLanes: @unchecked Sendable {
    // @unchecked: each lane writes only its own field; `concurrentPerform` returns after both, and `bytes` (the
    // chunk's buffer) outlives the call that owns this object.
    var file: SHA256
    var digest = ChunkDigest(index: 0, offset: 0, length: 0, sha256: .zero, crc32c: 0, compressibility: 0)
    private let hasher: ChunkHasher
    private let index: Int
    private let offset: Int64
    private let bytes: UnsafeRawBufferPointer

    init(file: SHA256, hasher: ChunkHasher, chunk: Chunk, bytes: UnsafeRawBufferPointer) {
        unsafe self.file = file
        unsafe self.hasher = hasher
        unsafe index = chunk.index
        unsafe offset = chunk.offset
        unsafe self.bytes = bytes
    }

    func run(_ lane: Int) {
        if lane == 0 {
            unsafe file.update(bytes)
        } else {
            unsafe digest = hasher.digest(index: index, offset: offset, bytes: bytes)
        }
    }
}
