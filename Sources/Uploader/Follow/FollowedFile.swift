public import AetherIO

/// A file read while another process still appends to it (`aether upload --follow`). It is opened once
/// (`O_RDONLY | O_NONBLOCK | O_CLOEXEC`, judged by `fstat` to be a regular file) and every later look checks that
/// the path still names the same inode and that the file never got shorter than what was already read: a
/// replaced file (`.fileReplaced`) or a truncated one (`.fileTruncated`) is an error, never a mix of versions.
///
/// Waiting at the end: inotify (`IN_MODIFY`, `IN_CLOSE_WRITE`, moves) wakes the follower as soon as the writer
/// appends or closes; without inotify the size is polled. Either way the follower sleeps between looks
/// (`pollInterval`), so no core spins.
///
/// Whether the writer is done (`writerHoldsFile()`): a process (this user's, or any for root) that holds the file
/// open for writing is found in `/proc/<pid>/fdinfo`; when `/proc` cannot be read, an `IN_CLOSE_WRITE` seen after
/// the last growth counts as closed.
public final class FollowedFile {
    /// The path as given.
    public let path: FilePath
    /// Device and inode of the file opened first.
    public let device: UInt64
    /// Inode of the file opened first.
    public let inode: UInt64
    let descriptor: Int32
    private let watch: Int32?
    /// The most bytes the file was ever seen to hold (it may never shrink below this).
    public private(set) var highWater: Int64 = 0
    /// Whether an `IN_CLOSE_WRITE` arrived since the file last grew.
    private(set) var closedSinceGrowth = false
    private var closed = false

    /// Opens `path` for following.
    public init(path: FilePath) throws(UploaderError) {
        self.path = path
        let descriptor: Int32
        do {
            descriptor = try Syscall.openReadOnly(path)
        } catch {
            throw UploaderError(.readFailed, "\(path) cannot be opened: \(error.message)", errno: error.errno)
        }
        let status: FileStatus
        do {
            status = try Syscall.fstat(descriptor, path: path.description)
        } catch {
            Syscall.close(descriptor)
            throw UploaderError(.readFailed, error.message, errno: error.errno)
        }
        guard status.isRegularFile else {
            Syscall.close(descriptor)
            throw UploaderError(.readFailed, "\(path) is \(status.kindName), not a regular file: it cannot be followed")
        }
        self.descriptor = descriptor
        device = status.device
        inode = status.inode
        highWater = status.size
        watch = FollowPosix.watch(path)
    }

    deinit { close() }

    /// Releases the descriptors (also done when the value goes away).
    public func close() {
        guard !closed else { return }
        closed = true
        if let watch { FollowPosix.close(watch) }
        Syscall.close(descriptor)
    }

    /// Whether inotify watches the file (else the follower polls).
    public var usesInotify: Bool { watch != nil }

    /// The file's size now, after checking that the path still names the opened file and that it did not shrink.
    public func currentSize() throws(UploaderError) -> Int64 {
        let status: FileStatus
        do {
            status = try Syscall.fstat(descriptor, path: path.description)
        } catch {
            throw UploaderError(.readFailed, error.message, errno: error.errno)
        }
        try checkSamePath()
        guard status.size >= highWater else {
            throw UploaderError(
                .fileTruncated,
                "\(path) shrank from \(highWater) to \(status.size) bytes while it was followed; nothing of it was "
                    + "completed")
        }
        if status.size > highWater {
            highWater = status.size
            closedSinceGrowth = false
        }
        return status.size
    }

    /// `.fileReplaced` when the path now names another file (renamed over, deleted and created again).
    func checkSamePath() throws(UploaderError) {
        let now: FileStatus
        do {
            now = try Syscall.stat(path)
        } catch {
            throw UploaderError(
                .fileReplaced, "\(path) was removed or renamed while it was followed (\(error.message))")
        }
        guard now.device == device, now.inode == inode else {
            throw UploaderError(
                .fileReplaced,
                "\(path) was replaced by another file (inode \(inode) -> \(now.inode)) while it was followed; "
                    + "the upload stops rather than mix two files")
        }
    }

    /// Reads exactly `count` bytes at `offset`: fewer means the file was truncated under the reader.
    public func read(offset: Int64, count: Int) throws(UploaderError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var outcome: Result<Int, IOError> = .success(0)
        unsafe bytes.withUnsafeMutableBytes { raw in
            outcome = Result { () throws(IOError) -> Int in
                try unsafe Syscall.preadFully(descriptor, into: raw, offset: offset, path: path.description)
            }
        }
        let done: Int
        do {
            done = try outcome.get()
        } catch {
            throw UploaderError(.readFailed, error.message, errno: error.errno)
        }
        guard done == count else {
            throw UploaderError(
                .fileTruncated,
                "\(path) ended at \(offset + Int64(done)) bytes while \(offset + Int64(count)) were being read: it "
                    + "was truncated while it was followed")
        }
        return bytes
    }

    /// Takes the inotify events queued since the last look (never blocks); true when any arrived. An
    /// `IN_CLOSE_WRITE` is remembered for `writerHoldsFile()`. Always false without inotify (the caller polls).
    public func drainEvents() -> Bool {
        guard let watch else { return false }
        let events = FollowPosix.drain(watch)
        if events.closedForWriting { closedSinceGrowth = true }
        return events.any
    }

    /// Whether any process holds the file open for writing: `/proc/<pid>/fd/<n>` resolved to this device and
    /// inode, with `fdinfo` flags not read-only. When `/proc` cannot be read, the answer is "no writer" only after
    /// an `IN_CLOSE_WRITE` since the last growth (and "a writer" without inotify, so only the idle rule and the
    /// caller's end signal can end the follow).
    public func writerHoldsFile() -> Bool {
        guard let writers = OpenWriters.scan() else { return watch == nil ? true : !closedSinceGrowth }
        return writers.contains(OpenWriters.Identity(device: device, inode: inode))
    }

    /// The `flags:` line of an fdinfo file (octal) has an access mode other than read-only.
    static func isOpenForWriting(_ fdinfo: FilePath) -> Bool {
        guard let descriptor = try? Syscall.openReadOnly(fdinfo) else { return false }
        defer { Syscall.close(descriptor) }
        guard let bytes = try? Syscall.readAll(descriptor, limit: 4096, path: fdinfo.description) else {
            return false
        }
        return accessModeIsWrite(fdinfo: String(decoding: bytes, as: UTF8.self))
    }

    /// Parses `flags:\t0100002` from fdinfo text: true when the access mode is write-only or read-write.
    static func accessModeIsWrite(fdinfo text: String) -> Bool {
        for line in text.split(separator: "\n") where line.hasPrefix("flags:") {
            let value = line.dropFirst("flags:".count).trimmingPrefix(while: { $0 == " " || $0 == "\t" })
            guard let flags = Int(value, radix: 8) else { return false }
            return flags & FollowPosix.accessModeMask != FollowPosix.readOnlyMode
        }
        return false
    }
}
