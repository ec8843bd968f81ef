#if canImport(Glibc)
    import Glibc
#endif

/// The fields of `struct stat` the TOCTOU guard compares.
struct FileStatus: Sendable, Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modificationNanoseconds: Int64
    let changeNanoseconds: Int64
    let mode: UInt32

    init(_ status: Glibc.stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modificationNanoseconds = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        changeNanoseconds = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
        mode = UInt32(status.st_mode)
    }

    var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }

    /// "directory", "FIFO" ... for error messages.
    var kindName: String {
        switch mode & UInt32(S_IFMT) {
        case UInt32(S_IFDIR): "a directory"
        case UInt32(S_IFIFO): "a FIFO"
        case UInt32(S_IFCHR): "a character device"
        case UInt32(S_IFBLK): "a block device"
        case UInt32(S_IFSOCK): "a socket"
        case UInt32(S_IFLNK): "a symbolic link"
        default: "not a regular file"
        }
    }
}
