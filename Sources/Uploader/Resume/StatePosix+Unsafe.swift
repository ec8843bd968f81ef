import AetherIO
import Glibc

/// Every libc call the Uploader's state directory makes (the directory, the master key file, the snapshot
/// vault). Nothing else in the Uploader imports Glibc. Each call retries EINTR and reports a failure as
/// `StatePosix.Errno`; every descriptor is opened with `O_CLOEXEC` and never follows a symbolic link.
enum StatePosix {
    /// A failed call's errno.
    struct Errno: Error, Equatable {
        let code: Int32
        static let noEntry = Errno(code: ENOENT)
        static let exists = Errno(code: EEXIST)
        static let symbolicLink = Errno(code: ELOOP)
        static let notADirectory = Errno(code: ENOTDIR)

        /// strerror_r (XSI variant): the text of the errno, never file contents.
        var text: String {
            var buffer = [CChar](repeating: 0, count: 128)
            let result = unsafe buffer.withUnsafeMutableBufferPointer { out in
                unsafe strerror_r(code, out.baseAddress!, out.count - 1)
            }
            guard result == 0 else { return "errno \(code)" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The fields of `struct stat` the state directory judges.
    struct Status: Equatable {
        let isRegularFile: Bool
        let isDirectory: Bool
        let permissions: UInt32
        let ownerID: UInt32
        let size: Int
        let device: UInt64
        let inode: UInt64
        /// "a directory", "a FIFO" ... for messages.
        let kindName: String

        init(_ raw: stat) {
            isRegularFile = raw.st_mode & S_IFMT == S_IFREG
            isDirectory = raw.st_mode & S_IFMT == S_IFDIR
            permissions = raw.st_mode & 0o7777
            ownerID = raw.st_uid
            size = Int(raw.st_size)
            device = UInt64(raw.st_dev)
            inode = UInt64(raw.st_ino)
            switch raw.st_mode & S_IFMT {
            case S_IFREG: kindName = "a regular file"
            case S_IFDIR: kindName = "a directory"
            case S_IFIFO: kindName = "a FIFO"
            case S_IFLNK: kindName = "a symbolic link"
            case S_IFSOCK: kindName = "a socket"
            case S_IFCHR: kindName = "a character device"
            case S_IFBLK: kindName = "a block device"
            default: kindName = "an unknown kind of file"
            }
        }
    }

    /// geteuid
    static func effectiveUserID() -> UInt32 { geteuid() }

    /// getenv, copied into a String.
    static func environment(_ name: String) -> String? {
        guard let value = unsafe getenv(name) else { return nil }
        return unsafe String(cString: value)
    }

    /// mkdir (the umask may clear bits; callers set the mode afterwards).
    static func makeDirectory(_ path: FilePath, mode: UInt32) throws(Errno) {
        _ = try retrying { unsafe path.withCString { unsafe mkdir($0, mode_t(mode)) } }
    }

    /// mkdirat of a name inside an open directory.
    static func makeDirectory(directory: Int32, _ name: String, mode: UInt32) throws(Errno) {
        _ = try retrying { unsafe mkdirat(directory, name, mode_t(mode)) }
    }

    /// lstat: the path itself, not what a symbolic link points at.
    static func statNoFollow(_ path: FilePath) throws(Errno) -> Status {
        var raw = stat()
        _ = try retrying { unsafe path.withCString { unsafe lstat($0, &raw) } }
        return Status(raw)
    }

    /// fstatat(AT_SYMLINK_NOFOLLOW) of a name inside an open directory.
    static func statNoFollow(directory: Int32, _ name: String) throws(Errno) -> Status {
        var raw = stat()
        _ = try retrying { unsafe fstatat(directory, name, &raw, AT_SYMLINK_NOFOLLOW) }
        return Status(raw)
    }

    /// fstat
    static func status(_ fd: Int32) throws(Errno) -> Status {
        var raw = stat()
        _ = try retrying { unsafe fstat(fd, &raw) }
        return Status(raw)
    }

    /// open(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    static func openDirectory(_ path: FilePath) throws(Errno) -> Int32 {
        try retrying { unsafe path.withCString { unsafe open($0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } }
    }

    /// openat(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) of a name inside an open directory.
    static func openDirectory(directory: Int32, _ name: String) throws(Errno) -> Int32 {
        try retrying { unsafe openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }

    /// openat(O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC): never follows a link, never blocks on
    /// a FIFO put where a file belongs.
    static func openForReading(directory: Int32, _ name: String) throws(Errno) -> Int32 {
        try retrying { unsafe openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
    }

    /// openat(O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC): a new file, never an existing one.
    static func createExclusive(directory: Int32, _ name: String, mode: UInt32) throws(Errno) -> Int32 {
        try retrying { unsafe openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
    }

    /// fchmod
    static func setPermissions(_ fd: Int32, _ mode: UInt32) throws(Errno) {
        _ = try retrying { fchmod(fd, mode_t(mode)) }
    }

    /// read until `buffer` is full or end of file; returns the number of bytes read.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
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
    static func writeFully(_ fd: Int32, from buffer: UnsafeRawBufferPointer) throws(Errno) {
        guard let base = buffer.baseAddress else { return }
        var done = 0
        while done < buffer.count {
            let result = unsafe write(fd, base + done, buffer.count - done)
            if result < 0 {
                if errno == EINTR { continue }
                throw Errno(code: errno)
            }
            done += result
        }
    }

    /// fsync
    static func synchronize(_ fd: Int32) throws(Errno) {
        _ = try retrying { fsync(fd) }
    }

    /// linkat without following: publishes a finished file under a name only if the name is free (EEXIST
    /// otherwise), which is what makes a file "created once".
    static func link(directory: Int32, _ from: String, to name: String) throws(Errno) {
        _ = try retrying { unsafe linkat(directory, from, directory, name, 0) }
    }

    /// unlinkat of a file.
    static func unlink(directory: Int32, _ name: String) throws(Errno) {
        _ = try retrying { unsafe unlinkat(directory, name, 0) }
    }

    /// close (not retried: Linux releases the descriptor even on EINTR).
    static func closeDescriptor(_ fd: Int32) { close(fd) }

    private static func retrying(_ call: () -> Int32) throws(Errno) -> Int32 {
        while true {
            let result = call()
            if result >= 0 { return result }
            if errno != EINTR { throw Errno(code: errno) }
        }
    }
}
