import Synchronization

/// What the engine knows in memory about the requests writing into one upload (appends, chunks, parity shards).
///
/// An upload with a request writing into it is not idle, whatever its recorded `updatedAt` says: that moves only
/// when bytes are committed, and one tus `PATCH` may run for hours. Expiry consults this (and skips the upload), the
/// sweep records it in the catalogue at a bounded rate (`UploadEngine.recordActivity`) so that other receivers
/// of a fleet see it too, and no catalogue write happens per network read.
struct UploadActivity {
    /// Requests writing into the upload now.
    var writers = 0
    /// Wall seconds at which a request last started or ended writing.
    var lastSeen: Int64
    /// The latest activity written to the catalogue as the upload's `updatedAt` by this receiver.
    var recorded = Int64.min
    /// The upload ended (completed, cancelled, expired) while requests still wrote into it: the entry goes when
    /// the last one ends.
    var ended = false
    /// It was cancelled while requests still wrote into it: the last one to end deletes its working blobs.
    var deletesWorkingBlobs = false

    /// The activity to compare with an expiry cutoff: now while a request writes, else when the last one ended.
    func seen(now: Int64) -> Int64 { writers > 0 ? now : lastSeen }
}

/// One request's registration as a writer of an upload (`UploadEngine.beginWriting`), ended exactly once: by the
/// sink when the request ends, or when it is dropped.
final class WriterLease: Sendable {
    private let engine: UploadEngine
    let id: UploadID
    private let open = Atomic<Bool>(true)

    init(engine: UploadEngine, id: UploadID) {
        self.engine = engine
        self.id = id
    }

    deinit { end() }

    /// Ends the registration; later calls do nothing.
    func end() {
        guard open.exchange(false, ordering: .acquiringAndReleasing) else { return }
        engine.endWriting(id)
    }

    /// Ends the registration of a request that found the upload no longer open: nothing was written, and the
    /// activity is forgotten once no other request writes.
    func withdraw() {
        guard open.exchange(false, ordering: .acquiringAndReleasing) else { return }
        engine.endWriting(id, forgetting: true)
    }
}
