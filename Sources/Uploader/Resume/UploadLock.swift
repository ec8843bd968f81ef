import AetherIO

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
        // The state directory and `locks/` are opened without following links and judged (a private directory of
        // this user), as `telemetry/` and `snapshots/` are; the lock file is opened inside the descriptor judged.
        let root = try directory.open()
        defer { AnchoredFiles.closeDescriptor(root) }
        let locks = try directory.openSubdirectory("locks", in: root)
        defer { AnchoredFiles.closeDescriptor(locks) }
        let path = directory.path.appending("locks").appending(key + ".lock")
        let taken: ExclusiveLockFile?
        do {
            taken = try ExclusiveLockFile(directory: locks, name: key + ".lock", path: path, waitingUpTo: wait)
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
