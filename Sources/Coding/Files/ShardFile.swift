import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// An open file descriptor for the shard-file codec: whole reads and writes at offsets, size, fsync, and the
/// directory operations around an atomic replace, all through AetherIO's `Syscall` layer (EINTR and short
/// transfers retried there). Every failure is a `CodingError(.fileSystem)` naming the path and errno.
final class ShardFile {
    /// The descriptor, closed in deinit.
    let descriptor: Int32
    /// The path it was opened with, for messages.
    let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { Syscall.close(descriptor) }

    /// Opens an existing file for reading; nil when it does not exist.
    static func openForReading(_ path: String) throws(CodingError) -> ShardFile? {
        do throws(IOError) {
            return ShardFile(descriptor: try Syscall.open(path, flags: O_RDONLY), path: path)
        } catch {
            if error.errno == ENOENT { return nil }
            throw failure("open", path, error)
        }
    }

    /// Creates or truncates a file for writing, mode 0644.
    static func create(_ path: String) throws(CodingError) -> ShardFile {
        do throws(IOError) {
            return ShardFile(
                descriptor: try Syscall.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644), path: path)
        } catch {
            throw failure("create", path, error)
        }
    }

    /// Creates a new temporary file next to `path` (same directory, so a rename replaces atomically).
    static func createTemporary(besides path: String) throws(CodingError) -> ShardFile {
        var template = Array((path + ".aether-ec-XXXXXX").utf8CString)
        let fd = unsafe template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return unsafe mkstemp(base)
        }
        guard fd >= 0 else { throw failure("create a temporary file for", path, code: errno) }
        let name = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ShardFile(descriptor: fd, path: name)
    }

    /// The size in bytes; a directory or other non-regular file is an error.
    func size() throws(CodingError) -> Int {
        let info: FileStatus
        do throws(IOError) {
            info = try Syscall.fstat(descriptor, path: path)
        } catch {
            throw Self.failure("stat", path, error)
        }
        guard info.isRegularFile else { throw CodingError(.fileSystem, "\(path) is not a regular file") }
        return Int(info.size)
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns fewer only at end of file.
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(CodingError) -> Int {
        do throws(IOError) {
            return try unsafe Syscall.preadFully(descriptor, into: buffer, offset: Int64(offset), path: path)
        } catch {
            throw Self.failure("read", path, error)
        }
    }

    /// Writes all of `buffer` at `offset`.
    func write(at offset: Int, from buffer: UnsafeRawBufferPointer) throws(CodingError) {
        do throws(IOError) {
            try unsafe Syscall.pwriteFully(descriptor, from: buffer, offset: Int64(offset), path: path)
        } catch {
            throw Self.failure("write", path, error)
        }
    }

    /// Sets the file's length.
    func truncate(to length: Int) throws(CodingError) {
        do throws(IOError) {
            try Syscall.ftruncate(descriptor, length: Int64(length), path: path)
        } catch {
            throw Self.failure("truncate", path, error)
        }
    }

    /// Flushes the file's data and metadata to stable storage.
    func sync() throws(CodingError) {
        do throws(IOError) {
            try Syscall.fsync(descriptor, path: path)
        } catch {
            throw Self.failure("fsync", path, error)
        }
    }

    /// Renames `from` over `to` (atomic within one file system).
    static func rename(_ from: String, to: String) throws(CodingError) {
        do throws(IOError) {
            try Syscall.rename(from, to: to)
        } catch {
            throw failure("rename \(from) to", to, error)
        }
    }

    /// Removes a file; a missing file is fine.
    static func remove(_ path: String) throws(CodingError) {
        do throws(IOError) {
            try Syscall.unlink(path)
        } catch {
            guard error.errno == ENOENT else { throw failure("remove", path, error) }
        }
    }

    /// Creates a directory unless it exists.
    static func makeDirectory(_ path: String) throws(CodingError) {
        do throws(IOError) {
            try Syscall.mkdir(path, mode: 0o755)
        } catch {
            guard error.errno == EEXIST else { throw failure("create directory", path, error) }
        }
    }

    /// Flushes a directory's entries (after a rename or create inside it).
    static func syncDirectory(_ path: String) throws(CodingError) {
        do throws(IOError) {
            try Syscall.syncDirectory(path)
        } catch {
            throw failure("fsync directory", path, error)
        }
    }

    /// The directory part of `path` ("." when there is none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func failure(_ action: String, _ path: String, _ error: IOError) -> CodingError {
        failure(action, path, code: error.errno ?? EIO)
    }

    private static func failure(_ action: String, _ path: String, code: Int32) -> CodingError {
        CodingError(
            .fileSystem, "cannot \(action) \(path): \(unsafe String(cString: strerror(code))) (errno \(code))")
    }
}
