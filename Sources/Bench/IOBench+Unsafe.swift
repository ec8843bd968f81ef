import AetherIO
internal import CAetherKernels

#if canImport(Glibc)
    import Glibc
#endif

/// The `io` suite's kernel baseline (the serial CRC32C loop, called directly) and the child-process
/// runner that measures `aether digest` against `openssl dgst`.
enum IOBaseline {
    /// caether_crc32c_hw_serial: the single-stream hardware CRC32C loop.
    static func serialCRC32C(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return crc }
        return unsafe caether_crc32c_hw_serial(crc, base, bytes.count)
    }

    /// The outcome of one child process.
    struct ChildRun {
        let seconds: Double
        let status: Int32
        let peakResidentKiB: Int
        /// The child's user + system CPU seconds (wait4's rusage).
        var cpuSeconds: Double = 0
    }

    /// posix_spawn + wait4: runs `arguments` (first is the executable path) with stdout to /dev/null,
    /// and returns wall time, exit status and the child's peak RSS (ru_maxrss).
    static func run(_ arguments: [String]) -> ChildRun {
        var actions = unsafe posix_spawn_file_actions_t()
        unsafe posix_spawn_file_actions_init(&actions)
        defer { unsafe posix_spawn_file_actions_destroy(&actions) }
        unsafe posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = unsafe arguments.map { unsafe strdup($0) } + [nil]
        defer { unsafe argv.forEach { unsafe free($0) } }
        var pid: pid_t = 0
        let start = Measure.now()
        let spawned = unsafe argv.withUnsafeBufferPointer { buffer in
            unsafe posix_spawn(&pid, arguments[0], &actions, nil, buffer.baseAddress!, environ)
        }
        guard spawned == 0 else { return ChildRun(seconds: 0, status: -1, peakResidentKiB: 0) }
        var status: Int32 = 0
        var usage = rusage()
        _ = try? Syscall.retryingEINTR("wait4", path: nil) { unsafe wait4(pid, &status, 0, &usage) }
        let seconds = Measure.now() - start
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let cpu =
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
        return ChildRun(seconds: seconds, status: exitStatus, peakResidentKiB: Int(usage.ru_maxrss), cpuSeconds: cpu)
    }

    /// getrusage(RUSAGE_SELF).ru_maxrss: this process's peak RSS in KiB.
    static func ownPeakResidentKiB() -> Int {
        var usage = rusage()
        _ = unsafe getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss)
    }

    /// The directory holding this executable (`aether` is built beside `aether-bench`).
    static func executableDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = unsafe readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return "." }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}
