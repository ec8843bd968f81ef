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

    init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
        size = status.size
        modificationNanoseconds = status.modificationNanoseconds
    }
}
