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
        let deadline = ContinuousClock.now + .milliseconds(Int64((max(0, wait) * 1000).rounded()))
        var taken = Self.flockRetryingInterrupts(opened)
        var code = errno
        while taken != 0, code == EWOULDBLOCK, ContinuousClock.now < deadline {
            usleep(10_000)
            taken = Self.flockRetryingInterrupts(opened)
            code = errno
        }
        guard taken == 0 else {
            Syscall.close(opened)
            if code == EWOULDBLOCK {
                throw ReceiverError(
                    .unavailable,
                    "the store \(directory) is in use by another receiver (\(path) is locked); stop that receiver or "
                        + "give another --dir")
            }
            throw ReceiverError(.storageFailed, "cannot lock \(path): errno \(code)")
        }
        descriptor = opened
    }

    deinit {
        Syscall.close(descriptor)
    }

    private static func flockRetryingInterrupts(_ descriptor: Int32) -> Int32 {
        while true {
            let result = flock(descriptor, LOCK_EX | LOCK_NB)
            if result == 0 || errno != EINTR { return result }
        }
    }
}
