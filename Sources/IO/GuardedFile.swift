/// A regular file opened for reading under the TOCTOU guard (HybridIOEngine security checklist):
/// `stat` before `open`, `open` with `O_NONBLOCK | O_CLOEXEC | O_NOCTTY` (a FIFO cannot block it),
/// `fstat` after, device and inode compared; a shared `flock` held while it is open;
/// `verifyUnchanged()` re-checks size, mtime and the path's inode after every chunk.
///
/// Every command that reads a file reads it through this type (the file being digested, a manifest,
/// a shard index, the shards, a certificate), so none of them can hang on a FIFO or read a device.
///
/// Not `Sendable`: one reader owns it.
public final class GuardedFile {
    /// The path as given.
    public let path: FilePath
    /// The open descriptor (read-only).
    let descriptor: Int32
    /// The file as it was when opened.
    public let identity: FileIdentity

    /// Opens `path` or throws `.notARegularFile` (directory, FIFO, device, socket), `.fileChanged`
    /// (replaced between `stat` and `open`) or `.systemCall` (missing, unreadable, locked by a writer).
    public convenience init(path: String) throws(IOError) {
        try self.init(path: FilePath(path))
    }

    /// Opens `path` (bytes, exactly as given) under the guard; errors as for `init(path: String)`.
    public init(path: FilePath) throws(IOError) {
        let before = try Syscall.stat(path)
        guard before.isRegularFile else {
            throw IOError(.notARegularFile, "\(path) is \(before.kindName)", path: path.description)
        }
        let descriptor = try Syscall.openReadOnly(path)
        do throws(IOError) {
            let after = try Syscall.fstat(descriptor, path: path.description)
            guard after.isRegularFile else {
                throw IOError(
                    .notARegularFile, "\(path) became \(after.kindName) while it was opened", path: path.description)
            }
            guard after.device == before.device, after.inode == before.inode else {
                throw IOError(.fileChanged, "\(path) was replaced between stat and open", path: path.description)
            }
            try Syscall.lockShared(descriptor, path: path.description)
            // Re-read once the lock is held, so the identity we guard is the locked one.
            let locked = try Syscall.fstat(descriptor, path: path.description)
            guard locked.inode == after.inode, locked.device == after.device else {
                throw IOError(.fileChanged, "\(path) changed while it was locked", path: path.description)
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
    public func verifyUnchanged() throws(IOError) {
        let now = try Syscall.fstat(descriptor, path: path.description)
        if now.size != identity.size {
            throw IOError(
                .fileChanged, "\(path) changed size from \(identity.size) to \(now.size) while it was read",
                path: path.description)
        }
        if now.modificationNanoseconds != identity.modificationNanoseconds {
            throw IOError(.fileChanged, "\(path) was modified while it was read", path: path.description)
        }
        let onPath: FileStatus
        do {
            onPath = try Syscall.stat(path)
        } catch {
            throw IOError(
                .fileChanged, "\(path) was removed or renamed while it was read", errno: error.errno,
                path: path.description)
        }
        if onPath.inode != identity.inode || onPath.device != identity.device {
            throw IOError(
                .fileChanged, "\(path) was replaced (renamed over) while it was read", path: path.description)
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> Int {
        guard buffer.count > 0 else { return 0 }
        return try unsafe Syscall.preadFully(descriptor, into: buffer, offset: offset, path: path.description)
    }

    /// The whole file, when it holds at most `maximumBytes` (else `.invalidArgument`, before anything is
    /// read), checked unchanged after the read. For small files: manifests, indexes, certificates.
    public func readAll(maximumBytes: Int) throws(IOError) -> [UInt8] {
        let size = identity.size
        guard size <= Int64(maximumBytes) else {
            throw IOError(
                .invalidArgument, "\(path) is \(size) bytes, more than the \(maximumBytes) it may hold",
                path: path.description)
        }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        var outcome: Result<Int, IOError> = .success(0)
        unsafe bytes.withUnsafeMutableBytes { raw in
            outcome = Result { () throws(IOError) -> Int in try unsafe self.read(at: 0, into: raw) }
        }
        let count = try outcome.get()
        try verifyUnchanged()
        guard count == bytes.count else {
            throw IOError(.unexpectedEndOfFile, "\(path) ended at \(count) of \(size) bytes", path: path.description)
        }
        return bytes
    }

    deinit {
        // Closing drops the flock too.
        Syscall.close(descriptor)
    }
}
