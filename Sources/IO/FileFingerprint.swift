/// A cheap identity of a file's content version: size, mtime, inode, device and the SHA-256 of the
/// first 4 KiB. Resume and dedup use it to tell "same file, unchanged" from "changed" without
/// hashing the whole file; any field that differs means the file must be read again.
public struct FileFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// Size in bytes.
    public let size: Int64
    /// Modification time in nanoseconds since the epoch.
    public let modificationNanoseconds: Int64
    /// Inode number.
    public let inode: UInt64
    /// Device number.
    public let device: UInt64
    /// SHA-256 of the first `min(size, 4096)` bytes.
    public let headSHA256: Digest32

    /// Fingerprints `path` under the TOCTOU guard (a file that changes while it is looked at throws
    /// `.fileChanged`).
    public init(path: String) throws(IOError) {
        try self.init(file: GuardedFile(path: FilePath(path)))
    }

    /// Fingerprints `path` (bytes, exactly as given) under the TOCTOU guard.
    public init(path: FilePath) throws(IOError) {
        try self.init(file: GuardedFile(path: path))
    }

    init(file: GuardedFile) throws(IOError) {
        let identity = file.identity
        let headCount = Int(min(identity.size, Int64(IOConstants.fingerprintHeadSize)))
        var head = [UInt8](repeating: 0, count: headCount)
        var outcome: Result<Int, IOError> = .success(0)
        unsafe head.withUnsafeMutableBytes { raw in
            outcome = Result { () throws(IOError) -> Int in
                try unsafe Syscall.preadFully(file.descriptor, into: raw, offset: 0, path: file.path.description)
            }
        }
        let done = try outcome.get()
        try file.verifyUnchanged()
        guard done == headCount else {
            throw IOError(
                .unexpectedEndOfFile, "\(file.path) ended inside its first \(headCount) bytes",
                path: file.path.description)
        }
        size = identity.size
        modificationNanoseconds = identity.modificationNanoseconds
        inode = identity.inode
        device = identity.device
        headSHA256 = SHA256.hash(head)
    }

    public var description: String {
        "FileFingerprint(size: \(size), mtime_ns: \(modificationNanoseconds), inode: \(inode), device: \(device), "
            + "head_sha256: \(headSHA256.hex))"
    }
}
