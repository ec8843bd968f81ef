import Synchronization

/// Uploads being written into are not idle (`UploadActivity`): every request that writes holds a `WriterLease`,
/// expiry skips an upload with a writer or with one that ended after the cutoff, and the sweep records that
/// activity in the catalogue (`recordActivity`) so that another receiver sharing it does not expire the upload
/// under this one's writer.
extension UploadEngine {
    /// Registers a request that is about to write into `id`; nil while the upload is being expired. Take it before
    /// the last look at the upload's state, so that an expiry either sees the writer or has already ended.
    func beginWriting(_ id: UploadID) -> WriterLease? {
        let at = now
        let registered = state.withLock { state -> Bool in
            guard !state.retiring.contains(id) else { return false }
            var activity = state.activity[id] ?? UploadActivity(lastSeen: at)
            activity.writers += 1
            activity.lastSeen = max(activity.lastSeen, at)
            state.activity[id] = activity
            return true
        }
        return registered ? WriterLease(engine: self, id: id) : nil
    }

    /// A writer of `id` ended (`WriterLease.end`); `forgetting` (the upload is no longer open) drops the activity
    /// when no other request writes.
    func endWriting(_ id: UploadID, forgetting: Bool = false) {
        let at = now
        let deletes = state.withLock { state -> Bool in
            guard var activity = state.activity[id] else { return false }
            activity.writers -= 1
            activity.lastSeen = max(activity.lastSeen, at)
            guard activity.writers <= 0, activity.ended || forgetting else {
                state.activity[id] = activity
                return false
            }
            state.activity[id] = nil
            return activity.deletesWorkingBlobs
        }
        // Cancelled while this request wrote: its bytes go now. A failure here leaves blobs of an upload that takes
        // no more bytes, which start-up recovery removes.
        if deletes { try? blobs.deleteWorkingBlobs(of: id) }
    }

    /// The upload ended (completed, cancelled or expired): its activity is forgotten, at once or when its last
    /// writer ends. With `deletingWorkingBlobs`, returns false when a writer is still open: the last writer to end
    /// deletes the working blobs, so nothing is deleted under it. Otherwise returns true.
    @discardableResult
    func forgetActivity(_ id: UploadID, deletingWorkingBlobs: Bool = false) -> Bool {
        state.withLock { state -> Bool in
            guard var activity = state.activity[id], activity.writers > 0 else {
                state.activity[id] = nil
                return true
            }
            activity.ended = true
            activity.deletesWorkingBlobs = activity.deletesWorkingBlobs || deletingWorkingBlobs
            state.activity[id] = activity
            return false
        }
    }

    /// Marks `id` as being expired when nothing wrote into it after `cutoff` (and none writes now): true when it
    /// may be expired; `finishRetiring` ends the mark. No request can start writing meanwhile.
    func beginRetiring(_ id: UploadID, cutoff: Int64) -> Bool {
        let at = now
        return state.withLock { state -> Bool in
            if let activity = state.activity[id], activity.seen(now: at) > cutoff { return false }
            state.retiring.insert(id)
            return true
        }
    }

    /// Ends the expiry mark of `id`; `expired` forgets its activity.
    func finishRetiring(_ id: UploadID, expired: Bool) {
        state.withLock { state in
            state.retiring.remove(id)
            if expired { state.activity[id] = nil }
        }
    }

    /// Whether a request writes into `id` now.
    func hasWriters(_ id: UploadID) -> Bool {
        state.withLock { ($0.activity[id]?.writers ?? 0) > 0 }
    }

    /// The latest activity of `id` known in memory (now while a request writes into it), nil when none.
    func lastActivity(_ id: UploadID) -> Int64? {
        let at = now
        return state.withLock { $0.activity[id]?.seen(now: at) }
    }

    /// Whether `record` has been idle for the expiry time: no commit and no request writing into it since.
    func isIdle(_ record: UploadRecord) -> Bool {
        guard record.state == .open else { return false }
        let latest = max(record.updatedAt, lastActivity(record.id) ?? record.updatedAt)
        return latest + limits.expirySeconds <= now
    }

    /// Records the activity of uploads written into here as their `updatedAt` (one catalogue write per upload and
    /// call, only where the activity is newer than what is recorded), and forgets the activity the catalogue now
    /// holds. The sweep calls it each round on every receiver, so an upload being received on one receiver of a
    /// fleet is never older than a sweep interval in the shared catalogue.
    func recordActivity() throws(ReceiverError) {
        let at = now
        let due: [(UploadID, Int64)] = state.withLock { state in
            var due: [(UploadID, Int64)] = []
            for (id, activity) in state.activity {
                let seen = activity.seen(now: at)
                if seen > activity.recorded {
                    due.append((id, seen))
                } else if activity.writers == 0 {
                    state.activity[id] = nil
                }
            }
            return due
        }
        for (id, seen) in due {
            try withGate(id) { () throws(ReceiverError) in
                guard var record = try catalog.record(id), record.state == .open, record.updatedAt < seen else {
                    return
                }
                record.updatedAt = seen
                try catalog.update(record, event: "receiving")
            }
            state.withLock { state in
                if var activity = state.activity[id] {
                    activity.recorded = max(activity.recorded, seen)
                    state.activity[id] = activity
                }
            }
        }
    }

    /// How many uploads have activity in memory (tests check that it is pruned).
    package var activityCount: Int { state.withLock { $0.activity.count } }
}
