import AetherIO
import AetherTransport
import Synchronization

/// The received prefix of a native chunk whose request was cut (`docs/PROTOCOL.md` 3.2.2): its first `received`
/// bytes are durable in place in the upload's stream file, unrecorded, with the running SHA-256 and CRC32C over them
/// (value types: this copy is a fork of the request's). A continuation from `received` with the same descriptor goes
/// on from here; the whole chunk is checked when its last byte is in, so the prefix is verified then.
struct ChunkPartial: Sendable {
    let descriptor: ChunkDescriptor
    let received: Int
    let sha256: SHA256
    let crc32c: CRC32C
}

/// The bytes of a chunk the receiver holds without having stored the chunk: a kept partial, or what a request still
/// receiving it wrote so far (`UploadEngine.partials`).
public struct ChunkPrefix: Sendable, Hashable {
    /// The chunk.
    public let index: Int
    /// Bytes from its first.
    public let received: Int

    /// A prefix.
    public init(index: Int, received: Int) {
        self.index = index
        self.received = received
    }
}

/// The partials the engine keeps, in memory only (a restart loses them: their bytes stay unrecorded and are written
/// again later), at most one per chunk, bounded per upload and in all; the oldest goes first when a bound is reached.
/// None holds a file descriptor.
struct PartialTable {
    private struct Entry {
        let partial: ChunkPartial
        let sequence: UInt64
    }

    private var uploads: [UploadID: [Int: Entry]] = [:]
    private var sequence: UInt64 = 0
    private(set) var count = 0

    /// Keeps `partial` for chunk `index` of `id` (replacing one kept before), dropping the oldest of the upload or of
    /// all when a bound is reached.
    mutating func keep(_ partial: ChunkPartial, id: UploadID, index: Int, perUpload: Int, total: Int) {
        guard perUpload > 0, total > 0 else { return }
        drop(id, index: index)
        while (uploads[id]?.count ?? 0) >= perUpload, let oldest = oldest(in: id) { drop(id, index: oldest) }
        while count >= total, let (upload, index) = oldestOfAll() { drop(upload, index: index) }
        sequence += 1
        uploads[id, default: [:]][index] = Entry(partial: partial, sequence: sequence)
        count += 1
    }

    func partial(_ id: UploadID, index: Int) -> ChunkPartial? { uploads[id]?[index]?.partial }

    /// Removes and returns the partial of chunk `index` of `id`.
    mutating func take(_ id: UploadID, index: Int) -> ChunkPartial? {
        guard let entry = uploads[id]?.removeValue(forKey: index) else { return nil }
        count -= 1
        if uploads[id]?.isEmpty == true { uploads[id] = nil }
        return entry.partial
    }

    mutating func drop(_ id: UploadID, index: Int) { _ = take(id, index: index) }

    mutating func dropAll(_ id: UploadID) {
        guard let entries = uploads.removeValue(forKey: id) else { return }
        count -= entries.count
    }

    /// The partials of `id`, by index.
    func prefixes(_ id: UploadID) -> [ChunkPrefix] {
        (uploads[id] ?? [:]).map { ChunkPrefix(index: $0.key, received: $0.value.partial.received) }
            .sorted { $0.index < $1.index }
    }

    private func oldest(in id: UploadID) -> Int? {
        uploads[id]?.min { $0.value.sequence < $1.value.sequence }?.key
    }

    private func oldestOfAll() -> (UploadID, Int)? {
        var best: (UploadID, Int, UInt64)?
        for (id, entries) in uploads {
            for (index, entry) in entries where best.map({ entry.sequence < $0.2 }) ?? true {
                best = (id, index, entry.sequence)
            }
        }
        return best.map { ($0.0, $0.1) }
    }
}

extension UploadEngine {
    /// Whether a cut chunk's received prefix is kept (`resume-chunk`): the blob store keeps a region's bytes in place
    /// and the limits allow at least one partial.
    var keepsCutPrefixes: Bool {
        blobs.keepsCutPrefixes && limits.maximumPartialsPerUpload > 0 && limits.maximumPartials > 0
    }

    /// Keeps the received prefix of chunk `index` of `id` (a cut request's, or a request taken over); false, keeping
    /// nothing, when the upload ended (completed, cancelled or expired) while the request wrote into it: its
    /// partials were dropped then, and one kept after would hold a place in the table until the bound pushed it out.
    @discardableResult
    func keepPartial(_ partial: ChunkPartial, id: UploadID, index: Int) -> Bool {
        let perUpload = min(limits.maximumPartialsPerUpload, AetherWire.maximumPartials)
        return state.withLock { state in
            guard state.activity[id]?.ended != true else { return false }
            state.partials.keep(partial, id: id, index: index, perUpload: perUpload, total: limits.maximumPartials)
            return true
        }
    }

    /// The partial of chunk `index` of `id`, left in place.
    func heldPartial(_ id: UploadID, index: Int) -> ChunkPartial? {
        state.withLock { $0.partials.partial(id, index: index) }
    }

    /// Removes and returns the partial of chunk `index` of `id` (a continuation takes it over).
    func takePartial(_ id: UploadID, index: Int) -> ChunkPartial? {
        state.withLock { $0.partials.take(id, index: index) }
    }

    /// Forgets the partial of chunk `index` (the chunk is written whole again, stored or rebuilt).
    func dropPartial(_ id: UploadID, index: Int) {
        state.withLock { $0.partials.drop(id, index: index) }
    }

    /// Forgets every partial of `id` (completed, cancelled or expired).
    func dropPartials(_ id: UploadID) {
        state.withLock { $0.partials.dropAll(id) }
    }

    /// The received prefixes of the chunks of `id` that are not stored: the kept partials and, for a chunk a request
    /// is receiving now, what it wrote so far (a client that gave up on a stalled request continues from there once
    /// its request takes the chunk over, which hands that prefix over). By index, at most
    /// `maximumPartialsPerUpload` (within `AetherWire.maximumPartials`).
    public func partials(_ id: UploadID, owner: ClientIdentity) throws(ReceiverError) -> [ChunkPrefix] {
        let record = try load(id, owner: owner, allowing: [.open, .complete, .failed])
        guard record.state == .open, record.uploadProtocol == .native else { return [] }
        let (kept, live) = state.withLock { state in
            (
                state.partials.prefixes(id),
                state.claimedRegions.compactMap { region, token in
                    region.upload == id ? region.index.map { ($0, token) } : nil
                }
            )
        }
        var byIndex = Dictionary(kept.map { ($0.index, $0.received) }, uniquingKeysWith: { first, _ in first })
        for (index, token) in live {
            if let received = token.heldPrefix { byIndex[index] = received }
        }
        let stored = Set(try catalog.chunkReceipts(id).map(\.index))
        let limit = min(limits.maximumPartialsPerUpload, AetherWire.maximumPartials)
        return byIndex.filter { !stored.contains($0.key) }.map { ChunkPrefix(index: $0.key, received: $0.value) }
            .sorted { $0.index < $1.index }.prefix(limit).map { $0 }
    }

    /// How many partials the engine keeps (tests check the bounds).
    package var partialCount: Int { state.withLock { $0.partials.count } }
}
