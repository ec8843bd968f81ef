import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// A file the shard-file codec writes (a shard, the index, a rebuilt file): whole writes and reads at
/// offsets (EINTR and short transfers retried), fsync, and the directory operations around an atomic
/// replace. Inputs are read through AetherIO's `GuardedFile` instead. Paths are bytes (`FilePath`) from
/// the caller to the system call. Every failure is a `CodingError(.fileSystem)` naming the path and errno.
final class ShardFile {
    /// The descriptor, closed in deinit.
    let descriptor: Int32
    /// The path it was opened with.
    let path: FilePath

    private init(descriptor: Int32, path: FilePath) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Creates a new file for writing (it must not exist), mode 0666 less the umask.
    static func create(_ path: FilePath) throws(CodingError) -> ShardFile {
        guard let file = try createUnlessExists(path) else {
            throw CodingError(.fileSystem, "cannot create \(path): it already exists")
        }
        return file
    }

    // `create`, but nil when the name is taken.
    private static func createUnlessExists(_ path: FilePath) throws(CodingError) -> ShardFile? {
        let fd = retrying {
            unsafe path.withCString { unsafe open($0, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o666) }
        }
        if fd < 0 {
            if errno == EEXIST { return nil }
            throw failure("create", path)
        }
        return ShardFile(descriptor: fd, path: path)
    }

    /// Creates a new temporary file next to `path` (same directory, so a rename replaces atomically),
    /// `.NAME.aether-ec-RANDOM`, mode 0666 less the umask (open(2) applies it, as for any new file).
    static func createTemporary(besides path: FilePath) throws(CodingError) -> ShardFile {
        for _ in 0..<8 {
            let name =
                [UInt8(ascii: ".")] + path.lastComponent.bytes
                + Array(".aether-ec-\(Hex.encode(SecureRandom.bytes(6)))".utf8)
            let candidate: FilePath
            do { candidate = try FilePath(bytes: name) } catch { throw CodingError(error) }
            if let file = try createUnlessExists(path.directory.appending(candidate)) { return file }
        }
        throw CodingError(.fileSystem, "no free temporary name beside \(path)")
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

    /// Writes all of `bytes` at offset 0.
    func write(_ bytes: [UInt8]) throws(CodingError) {
        var failure: CodingError?
        unsafe bytes.withUnsafeBytes { raw in
            do throws(CodingError) { try unsafe write(at: 0, from: raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Sets the file's length.
    func truncate(to length: Int) throws(CodingError) {
        guard retrying({ ftruncate(descriptor, off_t(length)) }) == 0 else { throw Self.failure("truncate", path) }
    }

    /// Sets the permission bits.
    func setPermissions(_ mode: UInt32) throws(CodingError) {
        guard retrying({ fchmod(descriptor, mode_t(mode)) }) == 0 else { throw Self.failure("chmod", path) }
    }

    /// Flushes the file's data and metadata to stable storage.
    func sync() throws(CodingError) {
        guard retrying({ fsync(descriptor) }) == 0 else { throw Self.failure("fsync", path) }
    }

    /// Renames `from` over `to` (atomic within one file system).
    static func rename(_ from: FilePath, to: FilePath) throws(CodingError) {
        let result = unsafe from.withCString { a in unsafe to.withCString { b in unsafe Glibc.rename(a, b) } }
        guard result == 0 else { throw failure("rename \(from) to", to) }
    }

    /// Removes a file; a missing file is fine.
    static func remove(_ path: FilePath) throws(CodingError) {
        guard unsafe path.withCString({ unsafe unlink($0) }) == 0 || errno == ENOENT else {
            throw failure("remove", path)
        }
    }

    /// Removes an empty directory; a missing one is fine.
    static func removeDirectory(_ path: FilePath) throws(CodingError) {
        guard unsafe path.withCString({ unsafe rmdir($0) }) == 0 || errno == ENOENT else {
            throw failure("remove directory", path)
        }
    }

    /// The names in a directory (without "." and ".."), as bytes.
    static func entries(of path: FilePath) throws(CodingError) -> [FilePath] {
        guard let stream = unsafe path.withCString({ unsafe opendir($0) }) else { throw failure("list", path) }
        defer { _ = unsafe closedir(stream) }
        var names: [FilePath] = []
        while true {
            errno = 0
            guard let entry = unsafe readdir(stream) else {
                if errno != 0 { throw failure("list", path) }
                return names
            }
            let bytes = unsafe withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                unsafe Array(raw.prefix { $0 != 0 })
            }
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            do { names.append(try FilePath(bytes: bytes)) } catch { throw CodingError(error) }
        }
    }

    /// Flushes a directory's entries (after a rename or create inside it).
    static func syncDirectory(_ path: FilePath) throws(CodingError) {
        let fd = retrying { unsafe path.withCString { unsafe open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) } }
        guard fd >= 0 else { throw failure("open directory", path) }
        defer { close(fd) }
        guard retrying({ fsync(fd) }) == 0 else { throw failure("fsync directory", path) }
    }

    private static func retrying(_ call: () -> Int32) -> Int32 {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    private func retrying(_ call: () -> Int32) -> Int32 { Self.retrying(call) }

    private static func failure(_ action: String, _ path: FilePath) -> CodingError {
        let code = errno
        return CodingError(
            .fileSystem, "cannot \(action) \(path): \(unsafe String(cString: strerror(code))) (errno \(code))")
    }
}
