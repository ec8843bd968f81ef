import Foundation
import Synchronization

/// A region of an upload's stream file held by the request that writes it (`UploadEngine.claimRegion`): a native
/// chunk written in place, or the tail of an IETF or tus byte stream being appended to. Every write, discard and
/// commit runs under `whileCurrent`, so once a newer request took the region over (the older one's connection is
/// usually dead: a reset the receiver never saw, or a link that froze without closing), the older request can
/// change nothing more. Released once, after the writer committed or discarded.
final class ChunkClaim: Sendable {
    private let engine: UploadEngine
    private let region: ChunkRegion
    let token: ClaimToken
    private let held = Atomic<Bool>(true)

    init(engine: UploadEngine, region: ChunkRegion, token: ClaimToken) {
        self.engine = engine
        self.region = region
        self.token = token
    }

    deinit { release() }

    /// Runs `body` while this request still owns the region (the region's writes wait for it); `.unavailable` once a
    /// newer request took the region over.
    func whileCurrent<T>(_ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        try token.whileCurrent(region: region, body)
    }

    /// Lets another request write the region; later calls do nothing.
    func release() {
        guard held.exchange(false, ordering: .acquiringAndReleasing) else { return }
        engine.state.withLock { state in
            if state.claimedRegions[region] === token { state.claimedRegions[region] = nil }
        }
    }
}

/// Whether the holder of a region still owns it; the lock serialises the holder's writes with a takeover.
final class ClaimToken: Sendable {
    private let current = Mutex(true)
    /// The chunk request holding the region (a native chunk written in place), which reports what it received so
    /// far and hands it over at a takeover. Weak: the request owns its claim, not the other way round.
    private let holder = Mutex(ClaimHolder())

    /// Registers the chunk request that holds the region.
    func hold(_ sink: ChunkSink) { holder.withLock { $0.sink = sink } }

    /// What the holding chunk request received so far, when a cut would keep it (`ChunkSink.prefixIfCut`).
    var heldPrefix: Int? { holder.withLock { $0.sink }?.prefixIfCut }

    func whileCurrent<T>(region: ChunkRegion, _ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        let result: Result<T, ReceiverError> = current.withLock { current in
            guard current else {
                let what = region.index.map { "chunk \($0)" } ?? "the append"
                return .failure(
                    ReceiverError(
                        .unavailable, "\(what) was taken over by a newer request for it; retry", chunk: region.index))
            }
            do throws(ReceiverError) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Ends the holder's ownership once its write in progress (if any) is done. A chunk request holding the region
    /// hands its received prefix over first (`ChunkSink.handOver`), under the same lock, so it can write nothing
    /// after the prefix was taken.
    func revoke() {
        let sink = holder.withLock { $0.sink }
        current.withLock { current in
            current = false
            sink?.handOver()
        }
    }

    /// Whether the holder still owns the region.
    var isCurrent: Bool { current.withLock { $0 } }
}

/// The chunk request of a `ClaimToken`, held weakly.
struct ClaimHolder {
    weak var sink: ChunkSink?
}

/// One chunk index of one native upload, or (index nil) the byte stream of an IETF or tus upload, which takes one
/// append at a time.
struct ChunkRegion: Hashable, Sendable {
    let upload: UploadID
    let index: Int?
}

extension UploadEngine {
    /// Claims chunk `index` of `id` for writing in place, or with `index` nil the byte stream of `id` for an
    /// append: two requests writing one region at once could leave a mix of their bytes under the receipt (or the
    /// offset) of one of them. A held region is waited for up to `takeOverAfter` seconds (a retry racing its own
    /// first attempt then finds the chunk stored, or the offset moved); after that the new request takes the region
    /// over and the older one can write, discard or commit nothing more. With `takeOverAfter` nil, a held region
    /// gives nil at once (a parity rebuild leaves a chunk being received to its request).
    func claimRegion(_ id: UploadID, index: Int?, takeOverAfter seconds: Double? = nil) -> ChunkClaim? {
        let region = ChunkRegion(upload: id, index: index)
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int64((seconds ?? 0) * 1000)))
        let token = ClaimToken()
        while true {
            let previous: ClaimToken? = state.withLock { state in
                let previous = state.claimedRegions[region]
                if previous == nil { state.claimedRegions[region] = token }
                return previous
            }
            guard let previous else { return ChunkClaim(engine: self, region: region, token: token) }
            guard let seconds else { return nil }
            if ContinuousClock.now >= deadline || seconds <= 0 {
                let replaced = state.withLock { state -> Bool in
                    guard state.claimedRegions[region] === previous else { return false }
                    state.claimedRegions[region] = token
                    return true
                }
                guard replaced else { continue }
                previous.revoke()
                return ChunkClaim(engine: self, region: region, token: token)
            }
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
