#if canImport(Glibc)
    import Glibc
#endif

/// The fields of `struct stat` the TOCTOU guard compares (returned by `Syscall.stat` and `Syscall.fstat`).
public struct FileStatus: Sendable, Equatable {
    /// `st_dev`.
    public let device: UInt64
    /// `st_ino`.
    public let inode: UInt64
    /// `st_size` in bytes.
    public let size: Int64
    /// `st_mtim` in nanoseconds since the epoch.
    public let modificationNanoseconds: Int64
    /// `st_ctim` in nanoseconds since the epoch.
    public let changeNanoseconds: Int64
    /// `st_mode`: file type and permission bits.
    public let mode: UInt32
    /// `st_uid`: the owner's user id.
    public let ownerID: UInt32

    init(_ status: Glibc.stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modificationNanoseconds = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        changeNanoseconds = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
        mode = UInt32(status.st_mode)
        ownerID = UInt32(status.st_uid)
    }

    /// Whether this is a regular file (not a directory, FIFO, device, socket or link).
    public var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }

    /// Whether this is a directory.
    public var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }

    /// Whether this is a symbolic link (only `lstat` describes one).
    public var isSymbolicLink: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFLNK) }

    /// The permission bits (`st_mode & 07777`).
    public var permissions: UInt32 { mode & 0o7777 }

    /// "a directory", "a FIFO" ... for error messages.
    public var kindName: String {
        switch mode & UInt32(S_IFMT) {
        case UInt32(S_IFREG): "a regular file"
        case UInt32(S_IFDIR): "a directory"
        case UInt32(S_IFIFO): "a FIFO"
        case UInt32(S_IFCHR): "a character device"
        case UInt32(S_IFBLK): "a block device"
        case UInt32(S_IFSOCK): "a socket"
        case UInt32(S_IFLNK): "a symbolic link"
        default: "an unknown kind of file"
        }
    }
}
