#if canImport(Glibc)
    import Glibc
#endif

/// An open file descriptor for the shard-file codec: whole reads and writes at offsets (EINTR and short
/// transfers retried), size, fsync, and the directory operations around an atomic replace. Every
/// failure is a `CodingError(.fileSystem)` naming the path and errno.
final class ShardFile {
    /// The descriptor, closed in deinit.
    let descriptor: Int32
    /// The path it was opened with, for messages.
    let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Opens an existing file for reading; nil when it does not exist.
    static func openForReading(_ path: String) throws(CodingError) -> ShardFile? {
        let fd = retrying { unsafe open(path, O_RDONLY | O_CLOEXEC) }
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw failure("open", path)
        }
        return ShardFile(descriptor: fd, path: path)
    }

    /// Creates or truncates a file for writing, mode 0644.
    static func create(_ path: String) throws(CodingError) -> ShardFile {
        let fd = retrying { unsafe open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw failure("create", path) }
        return ShardFile(descriptor: fd, path: path)
    }

    /// Creates a new temporary file next to `path` (same directory, so a rename replaces atomically).
    static func createTemporary(besides path: String) throws(CodingError) -> ShardFile {
        var template = Array((path + ".aether-ec-XXXXXX").utf8CString)
        let fd = unsafe template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return unsafe mkstemp(base)
        }
        guard fd >= 0 else { throw failure("create a temporary file for", path) }
        let name = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ShardFile(descriptor: fd, path: name)
    }

    /// The size in bytes; a directory or other non-regular file is an error.
    func size() throws(CodingError) -> Int {
        var info = stat()
        guard unsafe fstat(descriptor, &info) == 0 else { throw Self.failure("stat", path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CodingError(.fileSystem, "\(path) is not a regular file")
        }
        return Int(info.st_size)
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns fewer only at end of file.
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(CodingError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let count = unsafe pread(descriptor, base + done, buffer.count - done, off_t(offset + done))
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.failure("read", path)
            }
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// Writes all of `buffer` at `offset`.
    func write(at offset: Int, from buffer: UnsafeRawBufferPointer) throws(CodingError) {
        guard let base = buffer.baseAddress else { return }
        var done = 0
        while done < buffer.count {
            let count = unsafe pwrite(descriptor, base + done, buffer.count - done, off_t(offset + done))
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.failure("write", path)
            }
            done += count
        }
    }

    /// Sets the file's length.
    func truncate(to length: Int) throws(CodingError) {
        guard retrying({ ftruncate(descriptor, off_t(length)) }) == 0 else { throw Self.failure("truncate", path) }
    }

    /// Flushes the file's data and metadata to stable storage.
    func sync() throws(CodingError) {
        guard retrying({ fsync(descriptor) }) == 0 else { throw Self.failure("fsync", path) }
    }

    /// Renames `from` over `to` (atomic within one file system).
    static func rename(_ from: String, to: String) throws(CodingError) {
        guard unsafe Glibc.rename(from, to) == 0 else { throw failure("rename \(from) to", to) }
    }

    /// Removes a file; a missing file is fine.
    static func remove(_ path: String) throws(CodingError) {
        guard unsafe unlink(path) == 0 || errno == ENOENT else { throw failure("remove", path) }
    }

    /// Creates a directory unless it exists.
    static func makeDirectory(_ path: String) throws(CodingError) {
        guard unsafe mkdir(path, 0o755) == 0 || errno == EEXIST else { throw failure("create directory", path) }
    }

    /// Flushes a directory's entries (after a rename or create inside it).
    static func syncDirectory(_ path: String) throws(CodingError) {
        let fd = retrying { unsafe open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw failure("open directory", path) }
        defer { close(fd) }
        guard retrying({ fsync(fd) }) == 0 else { throw failure("fsync directory", path) }
    }

    /// The directory part of `path` ("." when there is none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func retrying(_ call: () -> Int32) -> Int32 {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    private func retrying(_ call: () -> Int32) -> Int32 { Self.retrying(call) }

    private static func failure(_ action: String, _ path: String) -> CodingError {
        let code = errno
        return CodingError(
            .fileSystem, "cannot \(action) \(path): \(unsafe String(cString: strerror(code))) (errno \(code))")
    }
}
