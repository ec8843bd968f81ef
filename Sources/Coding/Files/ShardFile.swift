import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// A file the shard-file codec creates in a new staging directory (a shard, the index): writes at offsets,
/// fsync, and the directory operations around a set that `DirectorySwap` switches in whole, all through
/// AetherIO's `Syscall` layer (EINTR and short transfers retried there). Inputs are read through AetherIO's
/// `GuardedFile`; a rebuilt file is written through AetherIO's one atomic writer (`AtomicFile.Staged`). Paths are bytes (`FilePath`) from the caller to the system call. Every failure is a
/// `CodingError(.fileSystem)` naming the path and errno.
final class ShardFile {
    /// The descriptor, closed in deinit.
    let descriptor: Int32
    /// The path it was opened with.
    let path: FilePath

    private init(descriptor: Int32, path: FilePath) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { Syscall.close(descriptor) }

    /// Creates a new file for writing (it must not exist), mode 0666 less the umask.
    static func create(_ path: FilePath) throws(CodingError) -> ShardFile {
        do throws(IOError) {
            let descriptor = try Syscall.open(path, flags: O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o666)
            return ShardFile(descriptor: descriptor, path: path)
        } catch {
            if error.errno == EEXIST { throw CodingError(.fileSystem, "cannot create \(path): it already exists") }
            throw failure("create", path, error)
        }
    }

    /// Writes all of `buffer` at `offset`.
    func write(at offset: Int, from buffer: UnsafeRawBufferPointer) throws(CodingError) {
        do throws(IOError) {
            try unsafe Syscall.pwriteFully(descriptor, from: buffer, offset: Int64(offset), path: path.description)
        } catch {
            throw Self.failure("write", path, error)
        }
    }

    /// Writes all of `bytes` at offset 0.
    func write(_ bytes: [UInt8]) throws(CodingError) {
        var failure: CodingError?
        unsafe bytes.withUnsafeBytes { raw in
            do throws(CodingError) { try unsafe write(at: 0, from: raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Flushes the file's data and metadata to stable storage.
    func sync() throws(CodingError) {
        do throws(IOError) {
            try Syscall.fsync(descriptor, path: path.description)
        } catch {
            throw Self.failure("fsync", path, error)
        }
    }

    /// Removes a file; a missing file is fine.
    static func remove(_ path: FilePath) throws(CodingError) {
        do throws(IOError) {
            try Syscall.unlink(path)
        } catch {
            guard error.errno == ENOENT else { throw failure("remove", path, error) }
        }
    }

    /// Removes an empty directory; a missing one is fine.
    static func removeDirectory(_ path: FilePath) throws(CodingError) {
        do throws(IOError) {
            try Syscall.rmdir(path)
        } catch {
            guard error.errno == ENOENT else { throw failure("remove directory", path, error) }
        }
    }

    /// The names in a directory (without "." and ".."), as bytes.
    static func entries(of path: FilePath) throws(CodingError) -> [FilePath] {
        do throws(IOError) {
            return try Syscall.directoryEntries(path)
        } catch {
            throw failure("list", path, error)
        }
    }

    /// Flushes a directory's entries (after a rename or create inside it).
    static func syncDirectory(_ path: FilePath) throws(CodingError) {
        do throws(IOError) {
            try Syscall.syncDirectory(path)
        } catch {
            throw failure("fsync directory", path, error)
        }
    }

    private static func failure(_ action: String, _ path: FilePath, _ error: IOError) -> CodingError {
        failure(action, path, code: error.errno ?? EIO)
    }

    private static func failure(_ action: String, _ path: FilePath, code: Int32) -> CodingError {
        CodingError(
            .fileSystem, "cannot \(action) \(path): \(unsafe String(cString: strerror(code))) (errno \(code))")
    }
}
