import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The few libc calls AetherScheduling needs outside netlink: whole-file reads of small
/// sysfs/procfs files. Every pointer use of the module (except netlink) is in this file.
enum SystemCalls {
    /// The bytes of a small file (at most `limit`), or nil when it is absent or unreadable (a sysfs or procfs
    /// source that this machine does not have). Reads through AetherIO's `Syscall` layer.
    static func readFile(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
        do throws(IOError) {
            let fd = try Syscall.open(path, flags: O_RDONLY)
            defer { Syscall.close(fd) }
            return try Syscall.readAll(fd, limit: limit, path: path)
        } catch {
            return nil
        }
    }

    /// Names in a directory (without `.` and `..`), sorted, or nil when it is absent or unreadable.
    static func listDirectory(_ path: String) -> [String]? {
        guard let names = try? Syscall.directoryEntries(FilePath(path)) else { return nil }
        return names.map(\.description).sorted()
    }

    /// Whether a path exists; calls `access(2)`.
    static func exists(_ path: String) -> Bool {
        unsafe access(path, F_OK) == 0
    }
}
