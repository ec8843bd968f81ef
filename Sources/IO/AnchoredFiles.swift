#if canImport(Glibc)
    import Glibc
#endif

/// The calls of the private state stores (the key store, the upload state directory, the snapshot vault): every
/// file is reached through an open directory descriptor (`openat`, `fstatat`, `linkat`, `unlinkat`), never follows
/// a symbolic link, never blocks on a FIFO put where a file belongs, and is opened with `O_CLOEXEC`. EINTR is
/// retried; a failure is `AnchoredFiles.Errno`, whose code callers compare (`.noEntry`, `.exists`) to tell an
/// absent item from a damaged one. Built on `Syscall` and its `FileStatus`.
public enum AnchoredFiles {
    /// A failed call's errno.
    public struct Errno: Error, Equatable, Sendable {
        /// The errno value.
        public let code: Int32
        /// ENOENT
        public static let noEntry = Errno(code: ENOENT)
        /// EEXIST
        public static let exists = Errno(code: EEXIST)
        /// ELOOP: the name is a symbolic link (`O_NOFOLLOW`).
        public static let symbolicLink = Errno(code: ELOOP)
        /// ENOTDIR
        public static let notADirectory = Errno(code: ENOTDIR)

        /// An errno value.
        public init(code: Int32) { self.code = code }

        /// The system's text for the errno, never file contents.
        public var text: String { unsafe String(cString: strerror(code)) }
    }

    /// geteuid
    public static func effectiveUserID() -> UInt32 { geteuid() }

    /// getenv, copied into a String.
    public static func environment(_ name: String) -> String? {
        guard let value = unsafe getenv(name) else { return nil }
        return unsafe String(cString: value)
    }

    /// mkdir (the umask may clear bits; callers set the mode afterwards).
    public static func makeDirectory(_ path: FilePath, mode: UInt32) throws(Errno) {
        _ = try retrying { unsafe path.withCString { unsafe mkdir($0, mode_t(mode)) } }
    }

    /// mkdirat of a name inside an open directory.
    public static func makeDirectory(directory: Int32, _ name: FilePath, mode: UInt32) throws(Errno) {
        _ = try retrying { unsafe name.withCString { unsafe mkdirat(directory, $0, mode_t(mode)) } }
    }

    /// lstat: the path itself, not what a symbolic link points at.
    public static func statNoFollow(_ path: FilePath) throws(Errno) -> FileStatus {
        var raw = Glibc.stat()
        _ = try retrying { unsafe path.withCString { unsafe lstat($0, &raw) } }
        return FileStatus(raw)
    }

    /// fstatat(AT_SYMLINK_NOFOLLOW) of a name inside an open directory.
    public static func statNoFollow(directory: Int32, _ name: FilePath) throws(Errno) -> FileStatus {
        var raw = Glibc.stat()
        _ = try retrying { unsafe name.withCString { unsafe fstatat(directory, $0, &raw, AT_SYMLINK_NOFOLLOW) } }
        return FileStatus(raw)
    }

    /// fstat
    public static func status(_ fd: Int32) throws(Errno) -> FileStatus {
        var raw = Glibc.stat()
        _ = try retrying { unsafe fstat(fd, &raw) }
        return FileStatus(raw)
    }

    /// open(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    public static func openDirectory(_ path: FilePath) throws(Errno) -> Int32 {
        try retrying { unsafe path.withCString { unsafe open($0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } }
    }

    /// openat(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) of a name inside an open directory.
    public static func openDirectory(directory: Int32, _ name: FilePath) throws(Errno) -> Int32 {
        try retrying {
            unsafe name.withCString { unsafe openat(directory, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        }
    }

    /// openat(O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) of a name inside an open directory.
    public static func openForReading(directory: Int32, _ name: FilePath) throws(Errno) -> Int32 {
        try retrying {
            unsafe name.withCString {
                unsafe openat(directory, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            }
        }
    }

    /// openat(O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC): a new file, never an existing one.
    public static func createExclusive(directory: Int32, _ name: FilePath, mode: UInt32) throws(Errno) -> Int32 {
        try retrying {
            unsafe name.withCString {
                unsafe openat(directory, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            }
        }
    }

    /// fchmod
    public static func setPermissions(_ fd: Int32, _ mode: UInt32) throws(Errno) {
        _ = try retrying { fchmod(fd, mode_t(mode)) }
    }

    /// read until `buffer` is full or end of file; returns the number of bytes read. EAGAIN (a FIFO opened
    /// non-blocking) is retried like EINTR.
    public static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let result = unsafe read(fd, base + done, buffer.count - done)
            if result < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw Errno(code: errno)
            }
            if result == 0 { break }
            done += result
        }
        return done
    }

    /// write until every byte of `buffer` is written.
    public static func writeFully(_ fd: Int32, from buffer: UnsafeRawBufferPointer) throws(Errno) {
        do throws(IOError) {
            try unsafe Syscall.writeFully(fd, from: buffer, path: "")
        } catch {
            throw Errno(code: error.errno ?? EIO)
        }
    }

    /// fsync
    public static func synchronize(_ fd: Int32) throws(Errno) {
        _ = try retrying { fsync(fd) }
    }

    /// linkat without following: publishes a finished file under a name only if the name is free (EEXIST
    /// otherwise), which is what makes a file "created once".
    public static func link(directory: Int32, _ from: FilePath, to name: FilePath) throws(Errno) {
        _ = try retrying {
            unsafe from.withCString { source in
                unsafe name.withCString { unsafe linkat(directory, source, directory, $0, 0) }
            }
        }
    }

    /// unlinkat of a file.
    public static func unlink(directory: Int32, _ name: FilePath) throws(Errno) {
        _ = try retrying { unsafe name.withCString { unsafe unlinkat(directory, $0, 0) } }
    }

    /// The names in an open directory (without "." and ".."); the descriptor stays open.
    public static func listDirectory(_ directory: Int32) throws(Errno) -> [String] {
        do throws(IOError) {
            return try Syscall.directoryEntries(descriptor: directory, path: "").map(\.description)
        } catch {
            throw Errno(code: error.errno ?? EIO)
        }
    }

    /// close (not retried: Linux releases the descriptor even on EINTR).
    public static func closeDescriptor(_ fd: Int32) { Syscall.close(fd) }

    private static func retrying(_ call: () -> Int32) throws(Errno) -> Int32 {
        do throws(IOError) {
            return try Syscall.retryingEINTR("", path: nil, call)
        } catch {
            throw Errno(code: error.errno ?? EIO)
        }
    }
}
