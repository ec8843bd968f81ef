import AetherIO
import Glibc

/// Every libc call the key store makes. Nothing else in Keys/ imports Glibc. Each function retries
/// EINTR where the call can see it and reports failures as `KeyStorePosix.Errno`. Paths are bytes
/// (`FilePath`, exactly as from `argv`); names inside an open directory are the store's own ASCII names.
enum KeyStorePosix {
    /// A failed call's errno.
    struct Errno: Error, Equatable {
        let code: Int32
        static let noEntry = Errno(code: ENOENT)
        static let exists = Errno(code: EEXIST)
        static let symbolicLink = Errno(code: ELOOP)

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

    /// What fstat/fstatat report that the key store checks.
    struct FileStatus {
        let isRegularFile: Bool
        let isDirectory: Bool
        let permissions: UInt32
        let ownerID: UInt32
        let size: Int
        let device: UInt64
        let inode: UInt64

        init(_ raw: stat) {
            isRegularFile = raw.st_mode & S_IFMT == S_IFREG
            isDirectory = raw.st_mode & S_IFMT == S_IFDIR
            permissions = raw.st_mode & 0o7777
            ownerID = raw.st_uid
            size = Int(raw.st_size)
            device = UInt64(raw.st_dev)
            inode = UInt64(raw.st_ino)
        }
    }

    /// geteuid
    static func effectiveUserID() -> UInt32 { geteuid() }

    /// getenv, copied into a String.
    static func environment(_ name: String) -> String? {
        guard let value = unsafe getenv(name) else { return nil }
        return unsafe String(cString: value)
    }

    /// mkdir with the given mode (the umask may clear bits; callers check afterwards).
    static func makeDirectory(_ path: FilePath, mode: UInt32) throws(Errno) {
        _ = try retrying { unsafe path.withCString { unsafe mkdir($0, mode_t(mode)) } }
    }

    /// lstat: the path itself, not what a symbolic link points at.
    static func statNoFollow(_ path: FilePath) throws(Errno) -> FileStatus {
        var raw = stat()
        _ = try retrying { unsafe path.withCString { unsafe lstat($0, &raw) } }
        return FileStatus(raw)
    }

    /// fstatat(AT_SYMLINK_NOFOLLOW) of a name inside a directory.
    static func statNoFollow(directory: Int32, _ name: FilePath) throws(Errno) -> FileStatus {
        var raw = stat()
        _ = try retrying { unsafe name.withCString { unsafe fstatat(directory, $0, &raw, AT_SYMLINK_NOFOLLOW) } }
        return FileStatus(raw)
    }

    /// fstat
    static func status(_ fd: Int32) throws(Errno) -> FileStatus {
        var raw = stat()
        guard unsafe fstat(fd, &raw) == 0 else { throw Errno(code: errno) }
        return FileStatus(raw)
    }

    /// open(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    static func openDirectory(_ path: FilePath) throws(Errno) -> Int32 {
        try retrying { unsafe path.withCString { unsafe open($0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } }
    }

    /// openat(O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC): never follows a link, never
    /// blocks on a FIFO someone put in place of an item.
    static func openForReading(directory: Int32, _ name: FilePath) throws(Errno) -> Int32 {
        try retrying {
            unsafe name.withCString {
                unsafe openat(directory, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            }
        }
    }

    /// fchmod
    static func setPermissions(_ fd: Int32, _ mode: UInt32) throws(Errno) {
        guard fchmod(fd, mode_t(mode)) == 0 else { throw Errno(code: errno) }
    }

    /// read until `buffer` is full or end of file; returns the number of bytes read.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        var done = 0
        while done < buffer.count {
            let result = unsafe read(fd, buffer.baseAddress! + done, buffer.count - done)
            if result < 0 {
                if errno == EINTR { continue }
                throw Errno(code: errno)
            }
            if result == 0 { break }
            done += result
        }
        return done
    }

    /// fsync
    static func synchronize(_ fd: Int32) throws(Errno) {
        _ = try retrying { fsync(fd) }
    }

    /// close (its error is not retried: Linux closes the descriptor even on EINTR).
    static func closeDescriptor(_ fd: Int32) { close(fd) }

    /// unlinkat of a file.
    static func unlink(directory: Int32, _ name: FilePath) throws(Errno) {
        _ = try retrying { unsafe name.withCString { unsafe unlinkat(directory, $0, 0) } }
    }

    /// The names in an open directory (without "." and ".."); the descriptor stays open.
    static func listDirectory(_ directory: Int32) throws(Errno) -> [String] {
        do throws(IOError) {
            return try Syscall.directoryEntries(descriptor: directory, path: "key store directory").map(\.description)
        } catch {
            throw Errno(code: error.errno ?? EIO)
        }
    }

    private static func retrying(_ call: () -> Int32) throws(Errno) -> Int32 {
        while true {
            let result = call()
            if result >= 0 { return result }
            if errno != EINTR { throw Errno(code: errno) }
        }
    }
}
