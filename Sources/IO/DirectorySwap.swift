#if canImport(Glibc)
    import Glibc
#endif

/// Puts a fully written directory in place of another, for outputs that are a set of files (an
/// erasure-coded shard set): the new set is written into a sibling directory, synced, then switched in.
///
/// The switch is `renameat2(RENAME_EXCHANGE)`: one atomic step, after which the target names the new set
/// and the staging name holds the old one. Where the file system refuses the exchange (EINVAL, ENOSYS:
/// some network and overlay file systems), it falls back to two renames (target to a backup name, staged
/// to target). A crash between them leaves the target missing and the old set whole under the backup
/// name (`.NAME.aether-old-...` beside it), never a mix of two sets.
public enum DirectorySwap {
    /// Makes a new, empty directory beside `target` (same parent, so a rename can switch them), named
    /// `.NAME.aether-new-PID-RANDOM`, with mode 0777 less the umask. Staging directories beside `target` that a
    /// process killed mid-write left behind (their PID no longer runs) are removed first.
    public static func makeStagingDirectory(besides target: FilePath) throws(IOError) -> FilePath {
        let parent = target.directory
        let name = target.lastComponent
        for abandoned in abandonedStagingDirectories(besides: target) { removeFlatDirectory(abandoned) }
        for _ in 0..<8 {
            let suffix = ".aether-new-\(getpid())-" + randomSuffix()
            let candidate = parent.appending(hiddenName(name, suffix: suffix))
            do {
                try Syscall.mkdir(candidate, mode: 0o777)
                return candidate
            } catch {
                if error.errno != EEXIST { throw error }
            }
        }
        throw IOError(.systemCall, "no free staging name beside \(target)", path: target.description)
    }

    /// The staging directories beside `target` whose writer no longer runs: `.NAME.aether-new-PID-RANDOM` where
    /// no process PID exists. A live writer's staging (another process encoding to the same target) is never
    /// listed.
    public static func abandonedStagingDirectories(besides target: FilePath) -> [FilePath] {
        let prefix = hiddenName(target.lastComponent, suffix: ".aether-new-").bytes
        guard let names = try? Syscall.directoryEntries(target.directory) else { return [] }
        return names.compactMap { entry -> FilePath? in
            guard entry.bytes.count > prefix.count, entry.bytes.starts(with: prefix) else { return nil }
            let rest = entry.bytes[prefix.count...]
            guard let dash = rest.firstIndex(of: UInt8(ascii: "-")),
                let pid = Int32(String(decoding: rest[rest.startIndex..<dash], as: UTF8.self)), pid > 0,
                rest[(dash + 1)...].count == 12
            else { return nil }
            guard kill(pid, 0) != 0, errno == ESRCH else { return nil }
            return target.directory.appending(entry)
        }
    }

    /// Removes a directory's plain entries, then the directory; a subdirectory inside keeps it (nothing is
    /// removed recursively), and failures are ignored (the caller only tidies up).
    private static func removeFlatDirectory(_ directory: FilePath) {
        for entry in (try? Syscall.directoryEntries(directory)) ?? [] {
            try? Syscall.unlink(directory.appending(entry))
        }
        try? Syscall.rmdir(directory)
    }

    /// Switches `staged` in as `target`. Returns where the previous `target` now is (to be removed by the
    /// caller), or nil when there was none. Syncs the parent directory. When the switch fails, the previous
    /// set is back at `target`; should even that fail, the error names the directory that now holds it.
    public static func replace(_ target: FilePath, with staged: FilePath) throws(IOError) -> FilePath? {
        try replace(target, with: staged, exchange: exchange, rename: rename)
    }

    /// `replace` with its two steps given, so that a test can make them fail.
    static func replace(
        _ target: FilePath, with staged: FilePath, exchange: (FilePath, FilePath) throws(IOError) -> Bool,
        rename: (FilePath, FilePath) throws(IOError) -> Void
    ) throws(IOError) -> FilePath? {
        let parent = target.directory
        defer { syncDirectory(parent) }
        guard try FileIdentity.current(target) != nil else {
            try rename(staged, target)
            return nil
        }
        if try exchange(staged, target) { return staged }
        // No exchange here: move the old set aside, then the new one in.
        let backup = parent.appending(hiddenName(target.lastComponent, suffix: ".aether-old-" + randomSuffix()))
        try rename(target, backup)
        do {
            try rename(staged, target)
        } catch {
            // Put the old set back; it was whole all along.
            do {
                try rename(backup, target)
            } catch let rollback {
                throw IOError(
                    .systemCall,
                    "could not move \(staged) in as \(target) (\(error.message)) nor move the previous set back "
                        + "(\(rollback.message)): it is whole in \(backup); rename that directory to \(target)",
                    errno: error.errno, path: backup.description)
            }
            throw error
        }
        return backup
    }

    /// fsync of a directory's entries; a failure is ignored (the data files were already synced).
    public static func syncDirectory(_ path: FilePath) {
        try? Syscall.syncDirectory(path)
    }

    private static func rename(_ from: FilePath, _ to: FilePath) throws(IOError) {
        try Syscall.rename(from, to: to)
    }

    private typealias RenameAt2 =
        @convention(c) (
            Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32
        ) -> Int32

    // glibc 2.28+ has renameat2, but the Glibc module does not export it; it is looked up once.
    private static let renameat2: RenameAt2? = {
        guard let handle = unsafe dlopen(nil, RTLD_NOW), let symbol = unsafe dlsym(handle, "renameat2") else {
            return nil
        }
        return unsafe unsafeBitCast(symbol, to: RenameAt2.self)
    }()

    /// RENAME_EXCHANGE; false when this system or file system does not support it.
    private static func exchange(_ first: FilePath, _ second: FilePath) throws(IOError) -> Bool {
        guard let renameat2 = unsafe renameat2 else { return false }
        let exchangeFlag: UInt32 = 1 << 1  // RENAME_EXCHANGE in <linux/fs.h>
        let result = unsafe first.withCString { a in
            unsafe second.withCString { b in unsafe renameat2(AT_FDCWD, a, AT_FDCWD, b, exchangeFlag) }
        }
        if result == 0 { return true }
        let code = errno
        if code == EINVAL || code == ENOSYS || code == ENOTSUP { return false }
        throw Syscall.failure("renameat2", code: code, path: second.description)
    }

    // "." + name + suffix: a hidden sibling name.
    private static func hiddenName(_ name: FilePath, suffix: String) -> FilePath {
        FilePath(trusted: [UInt8(ascii: ".")] + name.bytes + Array(suffix.utf8))
    }

    private static func randomSuffix() -> String {
        Hex.encode(SecureRandom.bytes(6))
    }
}
