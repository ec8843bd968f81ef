import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// One receiver at a time per store directory: an exclusive lock (`ExclusiveLockFile`) on `receiver.lock` in it,
/// held while the receiver serves. A second receiver started on a store in use is refused at start: its recovery
/// would otherwise treat the first one's work in progress as a crash's leftovers (truncate an append being
/// written, discard its staging, roll back an object being completed). Receivers share storage only in fleet mode
/// (S3 blobs and a PostgreSQL catalogue), which takes no such lock.
enum StoreLock {
    /// Takes the lock of `directory` (created when missing, as the store would be), waiting up to `waitingUpTo`
    /// seconds (a receiver killed a moment ago still holds it briefly), or throws `.unavailable` naming the
    /// directory when another receiver holds it.
    static func take(_ directory: FilePath, waitingUpTo wait: Double = 3) throws(ReceiverError) -> ExclusiveLockFile {
        try DirectoryBlobStore.makeDirectory(directory)
        let path = directory.appending("receiver.lock")
        let taken: ExclusiveLockFile?
        do {
            taken = try ExclusiveLockFile(path: path, waitingUpTo: wait)
        } catch {
            throw DirectoryBlobStore.storageError(error)
        }
        guard let taken else {
            throw ReceiverError(
                .unavailable,
                "the store \(directory) is in use by another receiver (\(path) is locked); stop that receiver or "
                    + "give another --dir")
        }
        return taken
    }
}
