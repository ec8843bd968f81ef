import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// One receiver at a time per store directory: an exclusive `flock` on `receiver.lock` in it, held while the
/// receiver serves. A second receiver started on a store in use is refused at start: its recovery would otherwise
/// treat the first one's work in progress as a crash's leftovers (truncate an append being written, discard its
/// staging, roll back an object being completed). Receivers share storage only in fleet mode (S3 blobs and a
/// PostgreSQL catalogue), which takes no such lock.
///
/// A receiver killed a moment ago keeps the lock a little past the moment its parent sees it die (its descriptors
/// are released after it is reaped), so a held lock is asked for again every 10 ms for up to `waitingUpTo` seconds.
final class StoreLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock of `directory` (created when missing, as the store would be), or throws `.unavailable`
    /// naming the directory when another receiver holds it after `waitingUpTo` seconds.
    init(directory: FilePath, waitingUpTo wait: Double = 3) throws(ReceiverError) {
        do {
            try Syscall.mkdir(directory, mode: 0o750)
        } catch {
            if error.errno != EEXIST { throw DirectoryBlobStore.storageError(error) }
        }
        let path = directory.appending("receiver.lock")
        let opened: Int32
        do {
            opened = try Syscall.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode: 0o600)
        } catch {
            throw DirectoryBlobStore.storageError(error)
        }
        let taken: Bool
        do {
            taken = try Syscall.lockExclusive(opened, waitingUpTo: wait, path: "\(path)")
        } catch {
            Syscall.close(opened)
            throw DirectoryBlobStore.storageError(error)
        }
        guard taken else {
            Syscall.close(opened)
            throw ReceiverError(
                .unavailable,
                "the store \(directory) is in use by another receiver (\(path) is locked); stop that receiver or "
                    + "give another --dir")
        }
        descriptor = opened
    }

    deinit {
        Syscall.close(descriptor)
    }
}
