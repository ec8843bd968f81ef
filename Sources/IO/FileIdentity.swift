#if canImport(Glibc)
    import Glibc
#endif

/// What identifies one version of a file: device, inode, size and modification time.
///
/// Two identities that differ mean the file was replaced, resized or written between two looks.
public struct FileIdentity: Sendable, Hashable {
    /// The device (`st_dev`).
    public let device: UInt64
    /// The inode number (`st_ino`).
    public let inode: UInt64
    /// The size in bytes.
    public let size: Int64
    /// The modification time in nanoseconds since the epoch.
    public let modificationNanoseconds: Int64
    /// Whether it is a directory.
    public let isDirectory: Bool
    /// Whether it is a regular file.
    public let isRegularFile: Bool
    /// The permission bits (`st_mode & 0o7777`).
    public let permissions: UInt32

    init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
        size = status.size
        modificationNanoseconds = status.modificationNanoseconds
        isDirectory = status.mode & UInt32(S_IFMT) == UInt32(S_IFDIR)
        isRegularFile = status.isRegularFile
        permissions = status.mode & 0o7777
    }

    /// The identity of what `path` names now (symbolic links followed), or nil when nothing is there.
    public static func current(_ path: FilePath) throws(IOError) -> FileIdentity? {
        do {
            return FileIdentity(try Syscall.stat(path))
        } catch  where error.errno == ENOENT {
            return nil
        }
    }

    /// Whether `path` itself is a symbolic link (lstat(2)); false when nothing is there.
    public static func isSymbolicLink(_ path: FilePath) throws(IOError) -> Bool {
        var status = Glibc.stat()
        let result = unsafe path.withCString { unsafe lstat($0, &status) }
        if result == 0 { return status.st_mode & S_IFMT == S_IFLNK }
        if errno == ENOENT { return false }
        throw Syscall.failure("lstat", code: errno, path: path.description)
    }

    /// Whether `self` and `other` are the same file (device and inode), whatever its size or mtime:
    /// true for hard links and for a symbolic link's target.
    public func isSameFile(as other: FileIdentity) -> Bool {
        device == other.device && inode == other.inode
    }
}
