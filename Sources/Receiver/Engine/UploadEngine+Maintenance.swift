import AetherIO
import Synchronization

extension UploadEngine {
    /// Cancels the upload `id` (tus termination, IETF and native `DELETE`): it is recorded as expired first (later
    /// requests get `.expired`), then its chunks, shards and stream are deleted (once the last request writing
    /// into it ended), and a completed upload's object with its dedup index entry (other uploads of the same
    /// content keep their own objects).
    public func cancel(_ id: UploadID, owner: ClientIdentity) throws(ReceiverError) {
        _ = try load(id, owner: owner, allowing: [.open, .failed, .complete])
        try withGate(id) { () throws(ReceiverError) in
            var record = try load(id, owner: owner, allowing: [.open, .failed, .complete])
            let wasComplete = record.state == .complete
            record.state = .expired
            record.failure = "cancelled"
            record.updatedAt = now
            try recordRemoval(record, event: "cancelled", freeingFirst: !wasComplete && !hasWriters(id))
            // A request still writing into it keeps its blobs until it ends (its commit then finds the upload
            // gone); nothing is deleted under a writer.
            if forgetActivity(id, deletingWorkingBlobs: true) { try blobs.deleteWorkingBlobs(of: id) }
            if wasComplete { try blobs.delete(.object(id)) }
        }
        state.withLock { _ = $0.possession.removeValue(forKey: id) }
        dropWholeHash(id)
        dropPartials(id)
    }

    /// Removes open uploads idle for longer than `limits.expirySeconds` at `wallSeconds` (default: now); returns
    /// their ids. An upload is idle when nothing was committed to it and no request wrote into it in that time: one
    /// with a request writing into it is never removed. First records the activity of the uploads written into
    /// here (`recordActivity`), so that the receivers of a fleet sharing the catalogue see it.
    @discardableResult
    public func expire(now wallSeconds: Int64? = nil) throws(ReceiverError) -> [UploadID] {
        // A failure to record activity or to remove one upload (the disk full) must not stop the expiry that frees
        // space: an upload with a writer here is skipped by what is in memory, the next uploads may free room, and
        // the first failure is reported after the round.
        var failure: ReceiverError?
        do { try recordActivity() } catch { failure = error }
        let cutoff = (wallSeconds ?? now) - limits.expirySeconds
        var removed: [UploadID] = []
        // One receiver of a fleet sweeps at a time; the others skip this round.
        _ = try catalog.exclusively("expiry") { () throws(ReceiverError) in
            for id in try catalog.idleUploads(before: cutoff + 1) {
                do throws(ReceiverError) {
                    if try expireOne(id, cutoff: cutoff) { removed.append(id) }
                } catch {
                    failure = failure ?? error
                }
            }
        }
        if let failure { throw failure }
        return removed
    }

    /// Records `record`'s removal. With `freeingFirst`, a catalogue that cannot grow because the disk is full
    /// (`ENOSPC`, `EDQUOT`) gets room from the upload's own working blobs, deleted first, and the removal is
    /// recorded again: otherwise a full disk stays full, since every removal (the sweep, a cancel) writes to the
    /// catalogue before it deletes. Only for an open upload that nothing writes into, whose bytes are being removed
    /// anyway: should the catalogue still fail, the upload stays recorded as open without its bytes, and a later
    /// append finds its stream shorter than the recorded offset and is refused (a native chunk region reads back
    /// as other bytes and fails its checks), until the next sweep records the removal.
    func recordRemoval(_ record: UploadRecord, event: String, freeingFirst: Bool) throws(ReceiverError) {
        do {
            try catalog.recordRemoval(record, event: event)
        } catch  where freeingFirst && error.isOutOfSpace {
            try blobs.deleteWorkingBlobs(of: record.id)
            try catalog.recordRemoval(record, event: event)
        }
    }

    /// Expires `id` if it is open and idle past `cutoff` (default: now minus the expiry): its recorded time and
    /// every request that wrote into it here are older than the cutoff, and none is writing now.
    @discardableResult
    func expireOne(_ id: UploadID, cutoff: Int64? = nil) throws(ReceiverError) -> Bool {
        let limit = cutoff ?? (now - limits.expirySeconds)
        let expired = try withGate(id) { () throws(ReceiverError) -> Bool in
            guard var record = try catalog.record(id), record.state == .open, record.updatedAt <= limit else {
                return false
            }
            guard beginRetiring(id, cutoff: limit) else { return false }
            var done = false
            defer { finishRetiring(id, expired: done) }
            record.state = .expired
            record.failure = "expired"
            record.updatedAt = now
            try recordRemoval(record, event: "expired", freeingFirst: true)
            done = true
            try blobs.deleteWorkingBlobs(of: id)
            return true
        }
        if expired {
            state.withLock { _ = $0.possession.removeValue(forKey: id) }
            dropWholeHash(id)
            dropPartials(id)
        }
        return expired
    }

    /// Expires `record` when it is idle (`isIdle`); true when it was expired here or meanwhile elsewhere.
    func expireIfIdle(_ record: UploadRecord) throws(ReceiverError) -> Bool {
        guard isIdle(record) else { return false }
        if try expireOne(record.id) { return true }
        return try catalog.record(record.id)?.state == .expired
    }

    /// Brings storage back in line with the catalogue after a crash; run once at start, before serving.
    ///
    /// Staged files are discarded; blobs the catalogue never committed are removed (a chunk without a receipt, the
    /// blobs of an upload that no longer takes bytes); a stream is cut back to its committed offset; an object
    /// assembled but not recorded is rolled back (its bytes return to the stream they were written into; a dedup
    /// alias is removed). Chunk files of an older store are moved into their upload's stream. Nothing acknowledged is touched and no partial object stays visible.
    ///
    /// A store shared with other live receivers (`sharedWithOtherReceivers`, a fleet's bucket) is left exactly as
    /// it is: what the catalogue says at this instant cannot tell a crashed write from another receiver's write
    /// that is between its bytes and its commit, so nothing may be cut, rolled back or removed on its strength. A
    /// crashed writer's pieces are never read (reads follow the receipts and the committed offset) and go with
    /// their upload's working blobs when it completes or expires; an object promoted just before a crash is whole
    /// and is completed again by the client's retry.
    @discardableResult
    public func recover() throws(ReceiverError) -> RecoveryReport {
        var report = RecoveryReport()
        if blobs.sharedWithOtherReceivers {
            report.catalogIntact = try catalog.integrityCheck()
            guard report.catalogIntact else {
                throw ReceiverError(.storageFailed, "the catalogue failed its integrity check")
            }
            return report
        }
        report.stagingDiscarded = try blobs.discardStaging()
        var records: [UploadID: UploadRecord?] = [:]
        func record(_ id: UploadID) throws(ReceiverError) -> UploadRecord? {
            if let known = records[id] { return known }
            let loaded = try catalog.record(id)
            records[id] = loaded
            return loaded
        }
        var chunkReceipts: [UploadID: Set<Int>] = [:]
        var parityReceipts: [UploadID: Set<Int>] = [:]
        let keys = try blobs.keys()
        // Objects first: a rolled-back stream object must exist as a stream before streams are checked.
        for key in keys {
            guard case .object(let id) = key else { continue }
            guard let upload = try record(id) else {
                try blobs.delete(key)
                report.blobsRemoved += 1
                continue
            }
            if upload.state == .complete { continue }
            // A native upload's object is its stream renamed (chunks are written in place) unless it is a dedup
            // alias of another object, which never had chunks and so never a stream: only the former returns.
            let hasChunks = upload.uploadProtocol == .native ? !(try catalog.chunkReceipts(id).isEmpty) : false
            let returns = upload.uploadProtocol.isByteStream || hasChunks
            if returns, upload.state == .open, try blobs.size(of: .stream(id)) == nil {
                try blobs.promote(key, to: .stream(id))
                report.assembliesRolledBack += 1
            } else {
                try blobs.delete(key)
                report.assembliesRolledBack += 1
            }
        }
        for key in try blobs.keys() {
            let id = key.upload
            let upload = try record(id)
            switch key {
            case .object: continue
            case .stream:
                // A native upload's chunks live in its stream; which regions hold data is in the receipts.
                if let upload, upload.uploadProtocol == .native, upload.state == .open || upload.state == .failed {
                    continue
                }
                if let upload, upload.state == .open, upload.uploadProtocol.isByteStream {
                    if let size = try blobs.size(of: key), size > upload.offset {
                        try blobs.append(to: key, at: upload.offset).commit()
                        report.streamsTruncated += 1
                    }
                } else {
                    try blobs.delete(key)
                    report.blobsRemoved += 1
                }
            case .chunk(_, let index):
                guard let upload, upload.state == .open || upload.state == .failed else {
                    try blobs.delete(key)
                    report.blobsRemoved += 1
                    continue
                }
                if chunkReceipts[id] == nil { chunkReceipts[id] = Set(try catalog.chunkReceipts(id).map(\.index)) }
                if chunkReceipts[id]?.contains(index) != true {
                    try blobs.delete(key)
                    report.blobsRemoved += 1
                } else if upload.state == .open {
                    // A chunk acknowledged by a receiver that kept one file per chunk: moved into the stream.
                    let bytes = try blobs.readAll(key, expectedLength: Self.chunkLength(index: index, record: upload))
                    let writer = try blobs.place(into: .stream(id), at: Self.chunkOffset(index: index, record: upload))
                    try writer.write(bytes)
                    try writer.commit()
                    try blobs.delete(key)
                }
            case .parity(_, let group, let shard):
                guard let upload, upload.state == .open || upload.state == .failed, let layout = upload.parity else {
                    try blobs.delete(key)
                    report.blobsRemoved += 1
                    continue
                }
                if parityReceipts[id] == nil { parityReceipts[id] = Set(try catalog.parityReceipts(id).map(\.index)) }
                if parityReceipts[id]?.contains(group * layout.parity + shard) != true {
                    try blobs.delete(key)
                    report.blobsRemoved += 1
                }
            }
        }
        // Uploads that no longer take bytes keep no working blobs (nor their folders).
        for id in Set(keys.map(\.upload)) {
            let upload = try record(id)
            if upload == nil || upload?.state == .complete || upload?.state == .expired {
                try blobs.deleteWorkingBlobs(of: id)
            }
        }
        report.catalogIntact = try catalog.integrityCheck()
        guard report.catalogIntact else {
            throw ReceiverError(.storageFailed, "the catalogue failed its integrity check")
        }
        return report
    }
}

/// What `UploadEngine.recover()` did.
public struct RecoveryReport: Sendable, Hashable {
    /// Staged (never committed) files removed.
    public var stagingDiscarded = 0
    /// Blobs removed because the catalogue never committed them or no longer needs them.
    public var blobsRemoved = 0
    /// Streams cut back to their committed offset.
    public var streamsTruncated = 0
    /// Objects assembled but not recorded, rolled back.
    public var assembliesRolledBack = 0
    /// The catalogue's own integrity check passed.
    public var catalogIntact = false

    /// An empty report.
    public init() {}
}
