import Foundation
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
    /// writing one region at once could leave a mix of their bytes under the receipt of one of them. With
    /// `waitingUpTo` seconds, a held region is waited for (a client's retry racing its own first attempt then
    /// finds the chunk stored instead of failing); nil when it is still held after that.
    func claimRegion(_ id: UploadID, index: Int, waitingUpTo seconds: Double = 0) -> ChunkClaim? {
        let region = ChunkRegion(upload: id, index: index)
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int64(seconds * 1000)))
        while true {
            if state.withLock({ $0.claimedRegions.insert(region).inserted }) {
                return ChunkClaim(engine: self, region: region)
            }
            guard ContinuousClock.now < deadline else { return nil }
            // The engine runs on the server's connection threads: a short sleep, not a suspension.
            Thread.sleep(forTimeInterval: 0.002)
        }
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
