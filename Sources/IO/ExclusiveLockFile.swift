#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock` on a lock file, held until this value is released or the process ends (a crash or kill -9
/// releases it); the file itself stays, empty. What keeps a second process off an upload (`UploadLock`) or a
/// store (the receiver's `StoreLock`).
///
/// A process killed a moment ago releases its locks a little after its parent sees it die (its descriptors go
/// after it is reaped: 7-118 ms after `timeout -s KILL` returned, in 37 of 40 kills measured here), so a held lock
/// is asked for again every 10 ms for up to the given wait: a supervisor that restarts a command at once gets the
/// lock instead of a refusal.
public final class ExclusiveLockFile: Sendable {
    private let descriptor: Int32

    /// Opens `path` (created with mode 0600 when missing; a symbolic link is refused) and locks it, waiting up to
    /// `seconds` while another holder has it; nil when it still does then.
    public init?(path: FilePath, waitingUpTo seconds: Double) throws(IOError) {
        let opened = try Syscall.open(path, flags: Self.openFlags, mode: 0o600)
        guard let locked = try Self.lock(opened, path: path.description, waitingUpTo: seconds) else { return nil }
        descriptor = locked
    }

    /// Opens `name` inside the open directory `directory` (created with mode 0600 when missing; a symbolic link is
    /// refused) and locks it as `init(path:waitingUpTo:)` does. A caller that judged the directory it opened (not
    /// a link, its owner's) keeps a link put in place of that directory from redirecting the lock file. `path`
    /// names the file in errors.
    public init?(directory: Int32, name: String, path: FilePath, waitingUpTo seconds: Double) throws(IOError) {
        let opened = try Syscall.openat(directory, name, flags: Self.openFlags, mode: 0o600, path: path.description)
        guard let locked = try Self.lock(opened, path: path.description, waitingUpTo: seconds) else { return nil }
        descriptor = locked
    }

    private static let openFlags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK

    /// Locks `opened`, asking again every 10 ms for up to `seconds`; returns it locked, or nil (closed) when another
    /// holder still has it. Any other failure closes it and throws.
    private static func lock(_ opened: Int32, path: String, waitingUpTo seconds: Double) throws(IOError) -> Int32? {
        let deadline = ContinuousClock.now + .milliseconds(Int64((max(0, seconds) * 1000).rounded()))
        while true {
            do {
                _ = try Syscall.retryingEINTR("flock", path: path) { flock(opened, LOCK_EX | LOCK_NB) }
                return opened
            } catch {
                guard error.errno == EWOULDBLOCK else {
                    Syscall.close(opened)
                    throw error
                }
                guard ContinuousClock.now < deadline else {
                    Syscall.close(opened)
                    return nil
                }
                usleep(10_000)
            }
        }
    }

    deinit {
        Syscall.close(descriptor)
    }
}
