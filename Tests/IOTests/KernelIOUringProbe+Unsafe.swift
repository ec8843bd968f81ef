import CAetherURing

#if canImport(Glibc)
    import Glibc
#endif

/// Asks the kernel directly whether this process may use io_uring, apart from `FileChunkReader`'s decision:
/// the `kernel.io_uring_disabled` sysctl (0 allowed, 1 only for the `io_uring_group`, 2 refused; absent before
/// Linux 6.6) and one real `io_uring_setup` (which also sees seccomp filters of a container).
enum KernelIOUringProbe {
    /// The sysctl's value, or nil when the kernel has none.
    static func disabledSysctl() -> Int? {
        let fd = unsafe open("/proc/sys/kernel/io_uring_disabled", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = unsafe buffer.withUnsafeMutableBytes { unsafe read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Int(String(decoding: buffer[0..<count], as: UTF8.self).filter(\.isNumber))
    }

    /// 0 when a ring can be set up (and is torn down again), else the errno of the refusal.
    /// Calls caether_uring_create (io_uring_queue_init) and caether_uring_destroy.
    static func setupErrno() -> Int32 {
        var ring: OpaquePointer?
        let rc = unsafe caether_uring_create(4, &ring)
        if rc == 0 { unsafe caether_uring_destroy(ring) }
        return -rc
    }
}
