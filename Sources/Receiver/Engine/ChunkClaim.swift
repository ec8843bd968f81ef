import Synchronization

/// A native chunk's region of its upload's stream file, held by the one request that writes it in place
/// (`UploadEngine.claimRegion`). Released once, after the writer committed or discarded.
final class ChunkClaim: Sendable {
    private let engine: UploadEngine
    private let region: ChunkRegion
    private let held = Atomic<Bool>(true)

    init(engine: UploadEngine, region: ChunkRegion) {
        self.engine = engine
        self.region = region
    }

    deinit { release() }

    /// Lets another request write the region; later calls do nothing.
    func release() {
        guard held.exchange(false, ordering: .acquiringAndReleasing) else { return }
        engine.state.withLock { _ = $0.claimedRegions.remove(region) }
    }
}

/// One chunk index of one native upload.
struct ChunkRegion: Hashable, Sendable {
    let upload: UploadID
    let index: Int
}

extension UploadEngine {
    /// Claims chunk `index` of `id` for writing in place, or nil while another request holds it: two requests
    /// writing one region at once could leave a mix of their bytes under the receipt of one of them.
    func claimRegion(_ id: UploadID, index: Int) -> ChunkClaim? {
        let region = ChunkRegion(upload: id, index: index)
        let claimed = state.withLock { $0.claimedRegions.insert(region).inserted }
        return claimed ? ChunkClaim(engine: self, region: region) : nil
    }

    /// Where chunk `index` starts in its upload's stream file.
    static func chunkOffset(index: Int, record: UploadRecord) -> Int64 {
        Int64(index) * Int64(record.chunkSize)
    }

    /// Chunk `index` of `record`, read back from the upload's stream file.
    func readChunk(_ record: UploadRecord, index: Int) throws(ReceiverError) -> [UInt8] {
        let length = Self.chunkLength(index: index, record: record)
        var bytes = [UInt8](repeating: 0, count: length)
        let read = try unsafe ByteBuffers.withMutableRaw(&bytes) { raw throws(ReceiverError) in
            try unsafe blobs.read(.stream(record.id), at: Self.chunkOffset(index: index, record: record), into: raw)
        }
        guard read == length else {
            throw ReceiverError(.storageFailed, "chunk \(index) is shorter than recorded", chunk: index)
        }
        return bytes
    }
}
