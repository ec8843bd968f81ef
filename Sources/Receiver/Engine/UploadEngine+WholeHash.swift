import AetherIO
import Synchronization

/// The whole-object SHA-256 of a native upload, fed with chunks `0..<through` in order as its stored prefix grows.
struct WholeHash: Sendable {
    var sha256 = SHA256()
    var through = 0
}

extension UploadEngine {
    /// Feeds the upload's whole-object hash with the chunks newly joined to its stored prefix, read back from
    /// storage where they were just written. The hashing then runs while later chunks arrive, on another core,
    /// instead of in one pass over the whole object when it completes. Called after a commit, outside the upload's
    /// gate: one feeder per upload at a time (a call while one runs asks it to look again, and returns at once), so
    /// the reads (GETs on a fleet's S3 store) never hold up the other chunks' commits. A stored chunk never changes
    /// until the upload ends, so reading it without the gate reads its stored bytes. A storage error stops the
    /// feeding here (completion hashes what is left); it never fails the chunk, which is already stored. Progress
    /// made after the upload's hash was dropped (completed, cancelled) is thrown away.
    func advanceWholeHash(_ record: UploadRecord) {
        // In a fleet each receiver would read the whole object back to feed a hash that only the completing one
        // needs (1 GiB read back per receiver per GiB uploaded, measured): there the completion hashes it all, in
        // large parallel reads.
        guard !blobs.sharedWithOtherReceivers else { return }
        let id = record.id
        let claimed: WholeHash? = state.withLock { state in
            if state.wholeHashFeeders[id] != nil {
                state.wholeHashFeeders[id] = true
                return nil
            }
            state.wholeHashFeeders[id] = false
            return state.wholeHashes[id] ?? WholeHash()
        }
        guard var progress = claimed else { return }
        while true {
            while progress.through < record.chunks {
                guard (try? catalog.chunkReceipt(id, index: progress.through)) != nil else { break }
                var fed = progress.sha256
                let offset = Self.chunkOffset(index: progress.through, record: record)
                let length = Int64(Self.chunkLength(index: progress.through, record: record))
                guard (try? hashStream(id, from: offset, count: length, into: &fed)) != nil else { break }
                progress.sha256 = fed
                progress.through += 1
            }
            let again = state.withLock { state -> Bool in
                guard let asked = state.wholeHashFeeders[id] else { return false }
                state.wholeHashes[id] = progress
                state.wholeHashFeeders[id] = asked ? false : nil
                return asked
            }
            guard again else { return }
        }
    }

    /// The whole-object SHA-256 of the native upload `record` once every chunk is stored (gate held): the hash fed
    /// so far (none after a restart) continued over the rest of the stream file.
    func wholeSHA256(_ record: UploadRecord, size: Int64) throws(ReceiverError) -> Digest32 {
        var progress = state.withLock { $0.wholeHashes[record.id] } ?? WholeHash()
        let offset = min(Self.chunkOffset(index: progress.through, record: record), size)
        try hashStream(record.id, from: offset, count: size - offset, into: &progress.sha256)
        return progress.sha256.finalize()
    }

    /// Feeds `count` bytes of the upload's stream file from `offset` into `sha256`.
    func hashStream(_ id: UploadID, from offset: Int64, count: Int64, into sha256: inout SHA256)
        throws(ReceiverError)
    {
        guard count > 0 else { return }
        // A shared (S3) store fetches the pieces of one read several at a time: larger reads, fewer round trips.
        let bufferSize = blobs.sharedWithOtherReceivers ? 32 << 20 : 4 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Int(min(count, Int64(bufferSize))), alignment: 64)
        defer { unsafe buffer.deallocate() }
        var done: Int64 = 0
        while done < count {
            let want = Int(min(Int64(buffer.count), count - done))
            let read = try unsafe blobs.read(
                .stream(id), at: offset + done, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            guard read == want else { throw ReceiverError(.storageFailed, "the stored chunks end early") }
            unsafe sha256.update(UnsafeRawBufferPointer(rebasing: buffer[0..<read]))
            done += Int64(read)
        }
    }

    /// Forgets the upload's whole-object hash (completed, cancelled or expired).
    func dropWholeHash(_ id: UploadID) {
        state.withLock { state in
            state.wholeHashes[id] = nil
            state.wholeHashFeeders[id] = nil
        }
    }
}
