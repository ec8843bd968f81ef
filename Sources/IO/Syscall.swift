#if canImport(Glibc)
    import Glibc
#endif

/// The one system-call layer of Aether: thin wrappers, one per call, that every module uses instead of calling
/// libc itself. Each retries EINTR in one helper (`retryingEINTR`), completes short reads and writes, opens every
/// descriptor with `O_CLOEXEC`, and turns a failure into `IOError(.systemCall)` carrying the call's name, errno
/// and path (ERR-1: errors are never EOF). Pointer arguments are the caller's buffers; nothing is kept.
public enum Syscall {
    /// Calls `call` until it returns something other than -1 with EINTR; -1 with any other errno
    /// becomes a typed error naming the call and the path. For a call this layer has no wrapper for.
    public static func retryingEINTR<T: FixedWidthInteger>(
        _ name: StaticString, path: String?, _ call: () -> T
    ) throws(IOError) -> T {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw failure(name, code: code, path: path)
        }
    }

    /// The error for a failed call: `name` and the system's text for `code`.
    public static func failure(_ name: StaticString, code: Int32, path: String?) -> IOError {
        let text = unsafe String(cString: strerror(code))
        return IOError(.systemCall, "\(name) failed: \(text)", errno: code, path: path)
    }

    /// stat(2), following symlinks, as the pre-open half of the TOCTOU guard.
    public static func stat(_ path: String) throws(IOError) -> FileStatus {
        try stat(FilePath(path))
    }

    /// stat(2) of a path given as bytes (exactly as from `argv`), following symlinks.
    public static func stat(_ path: FilePath) throws(IOError) -> FileStatus {
        var status = Glibc.stat()
        _ = try retryingEINTR("stat", path: path.description) {
            unsafe path.withCString { unsafe systemStat($0, &status) }
        }
        return FileStatus(status)
    }

    /// lstat(2) of a path given as bytes: a symbolic link is described itself, not followed.
    public static func lstat(_ path: FilePath) throws(IOError) -> FileStatus {
        var status = Glibc.stat()
        _ = try retryingEINTR("lstat", path: path.description) {
            unsafe path.withCString { unsafe Glibc.lstat($0, &status) }
        }
        return FileStatus(status)
    }

    /// The file systems mounted in this process's view, by device number (`st_dev`): their type names as
    /// `/proc/self/mountinfo` gives them (`proc`, `sysfs`, `ext4`, ...). Empty when it cannot be read.
    public static func mountedFileSystemTypes() -> [UInt64: String] {
        guard let fd = try? open("/proc/self/mountinfo", flags: O_RDONLY) else { return [:] }
        defer { close(fd) }
        guard let bytes = try? readAll(fd, limit: 16 << 20, path: "/proc/self/mountinfo") else { return [:] }
        var types: [UInt64: String] = [:]
        for line in bytes.split(separator: 0x0A) {
            // ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
            let fields = line.split(separator: 0x20)
            guard fields.count > 4, let separator = fields.firstIndex(where: { $0.elementsEqual([0x2D]) }),
                separator + 1 < fields.endIndex
            else { continue }
            let numbers = fields[2].split(separator: 0x3A)
            guard numbers.count == 2, let major = UInt64(String(decoding: numbers[0], as: UTF8.self)),
                let minor = UInt64(String(decoding: numbers[1], as: UTF8.self))
            else { continue }
            // glibc's makedev.
            let device =
                ((major & 0xfff) << 8) | ((major & ~0xfff) << 32) | (minor & 0xff) | ((minor & ~0xff) << 12)
            types[device] = String(decoding: fields[separator + 1], as: UTF8.self)
        }
        return types
    }

    /// fstat(2).
    public static func fstat(_ descriptor: Int32, path: String) throws(IOError) -> FileStatus {
        var status = Glibc.stat()
        _ = try retryingEINTR("fstat", path: path) { unsafe Glibc.fstat(descriptor, &status) }
        return FileStatus(status)
    }

    /// open(2) with `flags | O_CLOEXEC` and, when `flags` holds `O_CREAT`, permission bits `mode`.
    public static func open(_ path: String, flags: Int32, mode: UInt32 = 0) throws(IOError) -> Int32 {
        try open(FilePath(path), flags: flags, mode: mode)
    }

    /// open(2) of a path given as bytes (exactly as from `argv`).
    public static func open(_ path: FilePath, flags: Int32, mode: UInt32 = 0) throws(IOError) -> Int32 {
        try retryingEINTR("open", path: path.description) {
            unsafe path.withCString { unsafe Glibc.open($0, flags | O_CLOEXEC, mode) }
        }
    }

    /// openat(2) relative to the directory `directory`, with `flags | O_CLOEXEC`; `path` names it in errors.
    public static func openat(
        _ directory: Int32, _ name: String, flags: Int32, mode: UInt32 = 0, path: String
    ) throws(IOError) -> Int32 {
        try retryingEINTR("openat", path: path) { unsafe Glibc.openat(directory, name, flags | O_CLOEXEC, mode) }
    }

    /// open(2) read-only. O_NONBLOCK makes opening a FIFO return at once instead of waiting for a
    /// writer; it changes nothing for regular files. O_NOCTTY keeps a terminal from becoming ours.
    public static func openReadOnly(_ path: String) throws(IOError) -> Int32 {
        try openReadOnly(FilePath(path))
    }

    /// `openReadOnly` of a path given as bytes (exactly as from `argv`).
    public static func openReadOnly(_ path: FilePath) throws(IOError) -> Int32 {
        try retryingEINTR("open", path: path.description) {
            unsafe path.withCString { unsafe Glibc.open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        }
    }

    /// close(2). EINTR is not retried: on Linux the descriptor is released even then.
    public static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// flock(2), shared and non-blocking: a writer holding an exclusive lock is an error, not a wait.
    public static func lockShared(_ descriptor: Int32, path: String) throws(IOError) {
        _ = try retryingEINTR("flock", path: path) { systemFlock(descriptor, LOCK_SH | LOCK_NB) }
    }

    /// read(2) once: the bytes read, 0 at end of file.
    public static func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String
    ) throws(IOError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try retryingEINTR("read", path: path) { unsafe Glibc.read(descriptor, base, buffer.count) }
    }

    /// read(2) until end of file or `limit` bytes, whichever comes first.
    public static func readAll(_ descriptor: Int32, limit: Int, path: String) throws(IOError) -> [UInt8] {
        var result: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { unsafe buffer.deallocate() }
        while result.count < limit {
            let count = try unsafe read(descriptor, into: buffer, path: path)
            if count == 0 { break }
            unsafe result.append(contentsOf: buffer[0..<min(count, limit - result.count)])
        }
        return result
    }

    /// pread(2) until `buffer` is full or the file ends; returns the bytes read (short only at EOF).
    public static func preadFully(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: Int64, path: String
    ) throws(IOError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let count = try retryingEINTR("pread", path: path) {
                unsafe Glibc.pread(descriptor, base + done, buffer.count - done, off_t(offset + Int64(done)))
            }
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// write(2) until all of `buffer` is written (short writes are continued).
    public static func writeFully(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer, path: String)
        throws(IOError)
    {
        guard let base = buffer.baseAddress else { return }
        var done = 0
        while done < buffer.count {
            done += try retryingEINTR("write", path: path) {
                unsafe Glibc.write(descriptor, base + done, buffer.count - done)
            }
        }
    }

    /// write(2) until all of `bytes` is written.
    public static func writeFully(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws(IOError) {
        let result: Result<Void, IOError> = unsafe bytes.withUnsafeBytes { raw in
            do throws(IOError) {
                try unsafe writeFully(descriptor, from: raw, path: path)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// pwrite(2) until all of `buffer` is written at `offset`.
    public static func pwriteFully(
        _ descriptor: Int32, from buffer: UnsafeRawBufferPointer, offset: Int64, path: String
    ) throws(IOError) {
        guard let base = buffer.baseAddress else { return }
        var done = 0
        while done < buffer.count {
            done += try retryingEINTR("pwrite", path: path) {
                unsafe Glibc.pwrite(descriptor, base + done, buffer.count - done, off_t(offset + Int64(done)))
            }
        }
    }

    /// fsync(2): the file's data and metadata on stable storage.
    public static func fsync(_ descriptor: Int32, path: String) throws(IOError) {
        _ = try retryingEINTR("fsync", path: path) { Glibc.fsync(descriptor) }
    }

    /// ftruncate(2).
    public static func ftruncate(_ descriptor: Int32, length: Int64, path: String) throws(IOError) {
        _ = try retryingEINTR("ftruncate", path: path) { Glibc.ftruncate(descriptor, off_t(length)) }
    }

    /// rename(2): atomic within one file system.
    public static func rename(_ from: String, to: String) throws(IOError) {
        try rename(FilePath(from), to: FilePath(to))
    }

    /// rename(2) of paths given as bytes.
    public static func rename(_ from: FilePath, to: FilePath) throws(IOError) {
        _ = try retryingEINTR("rename", path: to.description) {
            unsafe from.withCString { source in unsafe to.withCString { unsafe Glibc.rename(source, $0) } }
        }
    }

    /// renameat(2) between two directory descriptors.
    public static func renameat(
        _ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String, path: String
    ) throws(IOError) {
        _ = try retryingEINTR("renameat", path: path) { unsafe Glibc.renameat(fromDirectory, from, toDirectory, to) }
    }

    /// unlink(2).
    public static func unlink(_ path: String) throws(IOError) {
        try unlink(FilePath(path))
    }

    /// unlink(2) of a path given as bytes.
    public static func unlink(_ path: FilePath) throws(IOError) {
        _ = try retryingEINTR("unlink", path: path.description) { unsafe path.withCString { unsafe Glibc.unlink($0) } }
    }

    /// rmdir(2) of a path given as bytes.
    public static func rmdir(_ path: FilePath) throws(IOError) {
        _ = try retryingEINTR("rmdir", path: path.description) { unsafe path.withCString { unsafe Glibc.rmdir($0) } }
    }

    /// mkdir(2) with permission bits `mode` (the umask applies).
    public static func mkdir(_ path: String, mode: UInt32) throws(IOError) {
        try mkdir(FilePath(path), mode: mode)
    }

    /// mkdir(2) of a path given as bytes.
    public static func mkdir(_ path: FilePath, mode: UInt32) throws(IOError) {
        _ = try retryingEINTR("mkdir", path: path.description) {
            unsafe path.withCString { unsafe Glibc.mkdir($0, mode) }
        }
    }

    /// The names in the directory `path` (without "." and ".."), as bytes, in the order readdir(3) gives them.
    public static func directoryEntries(_ path: FilePath) throws(IOError) -> [FilePath] {
        let descriptor = try open(path, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(descriptor) }
        return try directoryEntries(descriptor: descriptor, path: path.description)
    }

    /// The names in the open directory `descriptor` (without "." and ".."); the descriptor stays open and is
    /// not moved (the listing reads through a duplicate, rewound first).
    public static func directoryEntries(descriptor: Int32, path: String) throws(IOError) -> [FilePath] {
        let copy = try retryingEINTR("dup", path: path) { Glibc.fcntl(descriptor, F_DUPFD_CLOEXEC, 0) }
        guard let stream = unsafe Glibc.fdopendir(copy) else {
            let code = errno
            close(copy)
            throw failure("fdopendir", code: code, path: path)
        }
        defer { _ = unsafe Glibc.closedir(stream) }
        unsafe Glibc.rewinddir(stream)
        var names: [FilePath] = []
        while true {
            errno = 0
            guard let entry = unsafe Glibc.readdir(stream) else {
                if errno != 0 { throw failure("readdir", code: errno, path: path) }
                return names
            }
            let bytes = unsafe withUnsafeBytes(of: &entry.pointee.d_name) { raw in unsafe Array(raw.prefix { $0 != 0 })
            }
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            names.append(FilePath(trusted: bytes))
        }
    }

    /// Opens the directory `path` and fsyncs it, so that a rename or create inside it is on stable storage.
    public static func syncDirectory(_ path: String) throws(IOError) {
        try syncDirectory(FilePath(path))
    }

    /// `syncDirectory` of a path given as bytes.
    public static func syncDirectory(_ path: FilePath) throws(IOError) {
        let descriptor = try open(path, flags: O_RDONLY | O_DIRECTORY)
        defer { close(descriptor) }
        try fsync(descriptor, path: path.description)
    }

    /// poll(2) on one descriptor for `events`: true when one is ready, false on timeout. A timeout restarts in
    /// full after EINTR (callers use short timeouts in a loop).
    public static func poll(_ descriptor: Int32, events: Int16, timeoutMilliseconds: Int32, path: String)
        throws(IOError)
        -> Bool
    {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        return try retryingEINTR("poll", path: path) { unsafe Glibc.poll(&entry, 1, timeoutMilliseconds) } > 0
    }

    /// posix_fadvise(2) WILLNEED: asks the kernel to start reading a range ahead. Only a hint, so a
    /// failure is ignored.
    static func adviseWillNeed(_ descriptor: Int32, offset: Int64, length: Int64) {
        _ = posix_fadvise(descriptor, off_t(offset), off_t(length), POSIX_FADV_WILLNEED)
    }

    /// posix_fadvise(2) SEQUENTIAL: doubles the kernel's readahead window. Only a hint.
    static func adviseSequential(_ descriptor: Int32) {
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_SEQUENTIAL)
    }

    /// mmap(2) read-only, MAP_PRIVATE (copy-on-write: nothing we do reaches the file), then
    /// madvise(MADV_SEQUENTIAL) and MADV_WILLNEED. `offset` must be page aligned.
    public static func mapPrivate(
        _ descriptor: Int32, offset: Int64, length: Int, path: String
    ) throws(IOError) -> UnsafeRawBufferPointer {
        let address = unsafe Glibc.mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, off_t(offset))
        guard let address = unsafe address, unsafe address != MAP_FAILED else {
            throw failure("mmap", code: errno, path: path)
        }
        _ = unsafe madvise(address, length, MADV_SEQUENTIAL)
        _ = unsafe madvise(address, length, MADV_WILLNEED)
        return unsafe UnsafeRawBufferPointer(start: address, count: length)
    }

    /// munmap(2).
    public static func unmap(_ region: UnsafeRawBufferPointer) {
        guard let base = region.baseAddress else { return }
        _ = unsafe munmap(UnsafeMutableRawPointer(mutating: base), region.count)
    }

    /// The clocks `clockNanoseconds` reads.
    enum ClockID {
        /// `CLOCK_REALTIME`: the wall clock.
        case realTime
        /// `CLOCK_MONOTONIC`: time since boot, never decreasing.
        case monotonic
    }

    /// clock_gettime(2) in nanoseconds. It cannot fail for these clocks on Linux; a failure would read as 0.
    static func clockNanoseconds(_ clock: ClockID) -> Int64 {
        var spec = timespec()
        _ = unsafe clock_gettime(clock == .realTime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// The system page size.
    static let pageSize: Int = Int(sysconf(Int32(_SC_PAGESIZE)))
}

// Outside `Syscall`, whose own `stat` would shadow the C function.
private func systemStat(_ path: UnsafePointer<CChar>, _ status: UnsafeMutablePointer<Glibc.stat>) -> Int32 {
    unsafe stat(path, status)
}

private func systemFlock(_ descriptor: Int32, _ operation: Int32) -> Int32 {
    flock(descriptor, operation)
}
