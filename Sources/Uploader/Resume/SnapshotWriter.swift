import Synchronization

/// Latest-wins writing of one upload's snapshot, for callers that acknowledge chunks faster than the disk
/// syncs (a store is two fsyncs: docs/UPLOADER.md). `submit` stores the snapshot at once when no store is
/// running; when one is, it leaves the snapshot as the pending one and returns, and the caller that is storing
/// writes the newest pending snapshot as soon as its own store ends. So every acknowledged state reaches the
/// disk or is superseded by a newer one that does, no caller waits for more than the store it runs, and the
/// disk sees at most one store at a time per upload.
///
/// Each snapshot must be the whole state (later ones replace earlier ones). A failed store is thrown to the
/// caller that ran it and its snapshot stays pending (unless a newer one arrived), so the next `submit` or
/// `flush()` writes it again; `flush()` throws when that write fails.
public final class SnapshotWriter: Sendable {
    private struct State {
        var pending: [UInt8]?
        var writing = false
    }

    private let store: @Sendable ([UInt8]) throws(UploaderError) -> Void
    private let state = Mutex(State())

    /// A writer of `key`'s snapshot in `vault`.
    public convenience init(vault: SnapshotVault, key: String) {
        self.init { (snapshot) throws(UploaderError) in try vault.store(snapshot, for: key) }
    }

    /// A writer that stores through `store` (tests pass one that blocks or fails).
    init(store: @escaping @Sendable ([UInt8]) throws(UploaderError) -> Void) {
        self.store = store
    }

    /// Stores `snapshot` now, or leaves it for the store that is running (see the type's documentation).
    public func submit(_ snapshot: [UInt8]) throws(UploaderError) {
        let mine = state.withLock { (state) -> Bool in
            state.pending = snapshot
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        if mine { try drain() }
    }

    /// Writes what is pending, unless another caller is storing (it writes it); throws when the write fails.
    public func flush() throws(UploaderError) {
        let mine = state.withLock { (state) -> Bool in
            guard !state.writing, state.pending != nil else { return false }
            state.writing = true
            return true
        }
        if mine { try drain() }
    }

    /// Whether a snapshot is waiting to be written.
    public var hasPending: Bool { state.withLock { $0.pending != nil } }

    /// Stores pending snapshots until none is left; the caller holds the `writing` role and gives it up on
    /// return. A failure puts its snapshot back (unless a newer one is pending) and stops.
    private func drain() throws(UploaderError) {
        while true {
            let next = state.withLock { (state) -> [UInt8]? in
                guard let pending = state.pending else {
                    state.writing = false
                    return nil
                }
                state.pending = nil
                return pending
            }
            guard let next else { return }
            do {
                try store(next)
            } catch {
                state.withLock {
                    if $0.pending == nil { $0.pending = next }
                    $0.writing = false
                }
                throw error
            }
        }
    }
}
