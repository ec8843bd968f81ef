import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// One process at a time per upload: an exclusive lock (`ExclusiveLockFile`) on `locks/KEY.lock` in the state
/// directory, held while an upload runs (`aether upload`, `resume`) or is cancelled. A second process asking for
/// the same key gets `.alreadyRunning` (after `releaseWait`, in case the holder was killed a moment ago) instead
/// of writing the same snapshot and sending the same parts.
public final class UploadLock: Sendable {
    /// Seconds a held lock is waited for by default.
    public static let releaseWait = 2.0
    private let file: ExclusiveLockFile

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
        let taken: ExclusiveLockFile?
        do {
            taken = try ExclusiveLockFile(path: path, waitingUpTo: wait)
        } catch {
            throw UploaderError(.systemCall, "cannot lock \(path): \(error.message)", errno: error.errno)
        }
        guard let taken else {
            throw UploaderError(
                .alreadyRunning,
                "upload \(key) is running in another process now; wait for it, or stop it (Ctrl-C) and run the "
                    + "same command again")
        }
        file = taken
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
