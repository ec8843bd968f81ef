/// A regular file opened under the TOCTOU guard (HybridIOEngine security checklist):
/// `stat` before `open`, `fstat` after, device and inode compared; a shared `flock` held while it
/// is open; `verifyUnchanged()` re-checks size, mtime and the path's inode after every chunk.
///
/// Not `Sendable`: one reader owns it.
final class GuardedFile {
    /// The path as given.
    let path: String
    /// The open descriptor (read-only).
    let descriptor: Int32
    /// The file as it was when opened.
    let identity: FileIdentity

    /// Opens `path` or throws `.notARegularFile` (directory, FIFO, device, socket), `.fileChanged`
    /// (replaced between `stat` and `open`) or `.systemCall` (missing, unreadable, locked by a writer).
    init(path: String) throws(IOError) {
        let before = try Syscall.stat(path)
        guard before.isRegularFile else {
            throw IOError(.notARegularFile, "\(path) is \(before.kindName)", path: path)
        }
        let descriptor = try Syscall.openReadOnly(path)
        do throws(IOError) {
            let after = try Syscall.fstat(descriptor, path: path)
            guard after.isRegularFile else {
                throw IOError(.notARegularFile, "\(path) became \(after.kindName) while it was opened", path: path)
            }
            guard after.device == before.device, after.inode == before.inode else {
                throw IOError(.fileChanged, "\(path) was replaced between stat and open", path: path)
            }
            try Syscall.lockShared(descriptor, path: path)
            // Re-read once the lock is held, so the identity we guard is the locked one.
            let locked = try Syscall.fstat(descriptor, path: path)
            guard locked.inode == after.inode, locked.device == after.device else {
                throw IOError(.fileChanged, "\(path) changed while it was locked", path: path)
            }
            self.identity = FileIdentity(locked)
        } catch {
            Syscall.close(descriptor)
            throw error
        }
        self.path = path
        self.descriptor = descriptor
    }

    /// Throws `.fileChanged` when the open file's size or mtime moved (truncate, append, write) or
    /// the path now names another file (rename over, delete).
    func verifyUnchanged() throws(IOError) {
        let now = try Syscall.fstat(descriptor, path: path)
        if now.size != identity.size {
            throw IOError(
                .fileChanged, "\(path) changed size from \(identity.size) to \(now.size) while it was read", path: path)
        }
        if now.modificationNanoseconds != identity.modificationNanoseconds {
            throw IOError(.fileChanged, "\(path) was modified while it was read", path: path)
        }
        let onPath: FileStatus
        do {
            onPath = try Syscall.stat(path)
        } catch {
            throw IOError(
                .fileChanged, "\(path) was removed or renamed while it was read", errno: error.errno, path: path)
        }
        if onPath.inode != identity.inode || onPath.device != identity.device {
            throw IOError(.fileChanged, "\(path) was replaced (renamed over) while it was read", path: path)
        }
    }

    deinit {
        // Closing drops the flock too.
        Syscall.close(descriptor)
    }
}
