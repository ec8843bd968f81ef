import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// One process at a time per upload: an exclusive `flock` on `locks/KEY.lock` in the state directory, held
/// while an upload runs (`aether upload`, `resume`) or is cancelled. A second process asking for the same key
/// gets `.alreadyRunning` instead of writing the same snapshot and sending the same parts. The lock goes with the
/// process (a crash or kill -9 releases it); the lock file itself stays, empty.
///
/// A process killed a moment ago can hold the lock a little longer than its parent sees it live: its descriptors
/// are released after it has been reaped (measured here: 7-118 ms after `timeout -s KILL` returned, in 37 of 40
/// kills). A supervisor that restarts the command at once would then be told the upload runs elsewhere, so a held
/// lock is asked for again every 10 ms for up to `releaseWait` seconds before `.alreadyRunning`.
public final class UploadLock: Sendable {
    /// Seconds a held lock is waited for by default.
    public static let releaseWait = 2.0
    private let descriptor: Int32

    /// Takes the lock of `key` (1-256 bytes of letters, digits, `-` and `_`) in `directory`, waiting up to
    /// `waitingUpTo` seconds while another process holds it, then throws `.alreadyRunning`.
    public init(directory: UploadStateDirectory, key: String, waitingUpTo wait: Double = UploadLock.releaseWait)
        throws(UploaderError)
    {
        guard (1...256).contains(key.utf8.count),
            key.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || Self.isAlphanumeric($0) })
        else {
            throw UploaderError(.invalidArgument, "an upload id has 1-256 letters, digits, - or _")
        }
        let locks = directory.path.appending("locks")
        do {
            try Syscall.mkdir(locks, mode: UploadStateDirectory.directoryMode)
        } catch {
            if error.errno != EEXIST {
                throw UploaderError(.systemCall, "cannot make \(locks): \(error.message)", errno: error.errno)
            }
        }
        let path = locks.appending(key + ".lock")
        let opened: Int32
        do {
            opened = try Syscall.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode: 0o600)
        } catch {
            throw UploaderError(.systemCall, "cannot open the lock \(path): \(error.message)", errno: error.errno)
        }
        let taken: Bool
        do {
            taken = try Syscall.lockExclusive(opened, waitingUpTo: wait, path: "\(path)")
        } catch {
            Syscall.close(opened)
            throw UploaderError(.systemCall, "cannot lock \(path): \(error.message)", errno: error.errno)
        }
        guard taken else {
            Syscall.close(opened)
            throw UploaderError(
                .alreadyRunning,
                "upload \(key) is running in another process now; wait for it, or stop it (Ctrl-C) and run the "
                    + "same command again")
        }
        descriptor = opened
    }

    deinit {
        Syscall.close(descriptor)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
