import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// One process at a time per upload: an exclusive `flock` on `locks/KEY.lock` in the state directory, held
/// while an upload runs (`aether upload`, `resume`) or is cancelled. A second process asking for the same key
/// gets `.alreadyRunning` at once instead of writing the same snapshot and sending the same parts. The lock
/// goes with the process (a crash or kill -9 releases it); the lock file itself stays, empty.
public final class UploadLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock of `key` (1-256 bytes of letters, digits, `-` and `_`) in `directory`, or throws
    /// `.alreadyRunning` when another process holds it.
    public init(directory: UploadStateDirectory, key: String) throws(UploaderError) {
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
        let taken = Syscall.retryingFlock(opened, LOCK_EX | LOCK_NB)
        guard taken == 0 else {
            let code = errno
            Syscall.close(opened)
            if code == EWOULDBLOCK {
                throw UploaderError(
                    .alreadyRunning,
                    "upload \(key) is running in another process now; wait for it, or stop it (Ctrl-C) and run the "
                        + "same command again")
            }
            throw UploaderError(.systemCall, "cannot lock \(path): errno \(code)", errno: code)
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

extension Syscall {
    /// flock(2), retried on EINTR; the result as flock returns it (errno set on -1).
    fileprivate static func retryingFlock(_ descriptor: Int32, _ operation: Int32) -> Int32 {
        while true {
            let result = flock(descriptor, operation)
            if result == 0 || errno != EINTR { return result }
        }
    }
}
