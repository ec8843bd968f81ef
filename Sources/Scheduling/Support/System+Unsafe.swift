#if canImport(Glibc)
    import Glibc
#endif

/// The few libc calls AetherScheduling needs outside netlink: whole-file reads of small
/// sysfs/procfs files. Every pointer use of the module (except netlink) is in this file.
enum SystemCalls {
    /// The bytes of a small file (at most `limit`), or nil when it is absent or unreadable.
    /// Calls `open(2)`, `read(2)` (EINTR retried) and `close(2)`.
    static func readFile(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
        let fd = unsafe open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while result.count < limit {
            let count = unsafe buffer.withUnsafeMutableBytes { raw in
                unsafe read(fd, raw.baseAddress, raw.count)
            }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            result.append(contentsOf: buffer[0..<count])
        }
        return Array(result.prefix(limit))
    }

    /// Names in a directory (without `.` and `..`), or nil when it is absent. Calls `opendir`, `readdir`, `closedir`.
    static func listDirectory(_ path: String) -> [String]? {
        guard let dir = unsafe opendir(path) else { return nil }
        defer { unsafe closedir(dir) }
        var names: [String] = []
        while let entry = unsafe readdir(dir) {
            let name = unsafe withUnsafeBytes(of: unsafe entry.pointee.d_name) { raw in
                unsafe String(decoding: unsafe raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Whether a path exists; calls `access(2)`.
    static func exists(_ path: String) -> Bool {
        unsafe access(path, F_OK) == 0
    }
}
