#if canImport(Glibc)
    import Glibc
#endif

/// Thin wrappers of the system calls AetherIO uses. Each retries EINTR in one helper and turns a
/// failure into `IOError(.systemCall)` carrying errno and path (ERR-1: errors are never EOF).
enum Syscall {
    /// Calls `call` until it returns something other than -1 with EINTR; -1 with any other errno
    /// becomes a typed error naming the call and the path.
    static func retryingEINTR<T: FixedWidthInteger>(
        _ name: StaticString, path: String?, _ call: () -> T
    ) throws(IOError) -> T {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw failure(name, code: code, path: path)
        }
    }

    /// The error for a failed call: `name` and the system's text for `code`.
    static func failure(_ name: StaticString, code: Int32, path: String?) -> IOError {
        let text = unsafe String(cString: strerror(code))
        return IOError(.systemCall, "\(name) failed: \(text)", errno: code, path: path)
    }

    /// stat(2), following symlinks, as the pre-open half of the TOCTOU guard.
    static func stat(_ path: String) throws(IOError) -> FileStatus {
        var status = Glibc.stat()
        _ = try retryingEINTR("stat", path: path) { unsafe systemStat(path, &status) }
        return FileStatus(status)
    }

    /// fstat(2).
    static func fstat(_ descriptor: Int32, path: String) throws(IOError) -> FileStatus {
        var status = Glibc.stat()
        _ = try retryingEINTR("fstat", path: path) { unsafe Glibc.fstat(descriptor, &status) }
        return FileStatus(status)
    }

    /// open(2) read-only. O_NONBLOCK makes opening a FIFO return at once instead of waiting for a
    /// writer; it changes nothing for regular files. O_NOCTTY keeps a terminal from becoming ours.
    static func openReadOnly(_ path: String) throws(IOError) -> Int32 {
        try retryingEINTR("open", path: path) {
            unsafe Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        }
    }

    /// close(2). EINTR is not retried: on Linux the descriptor is released even then.
    static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// flock(2), shared and non-blocking: a writer holding an exclusive lock is an error, not a wait.
    static func lockShared(_ descriptor: Int32, path: String) throws(IOError) {
        _ = try retryingEINTR("flock", path: path) { systemFlock(descriptor, LOCK_SH | LOCK_NB) }
    }

    /// pread(2) until `buffer` is full or the file ends; returns the bytes read (short only at EOF).
    static func preadFully(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: Int64, path: String
    ) throws(IOError) -> Int {
        var done = 0
        while done < buffer.count {
            let count = try retryingEINTR("pread", path: path) {
                unsafe Glibc.pread(
                    descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
            }
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// posix_fadvise(2) WILLNEED: asks the kernel to start reading a range ahead. Only a hint, so a
    /// failure is ignored.
    static func adviseWillNeed(_ descriptor: Int32, offset: Int64, length: Int64) {
        _ = posix_fadvise(descriptor, off_t(offset), off_t(length), POSIX_FADV_WILLNEED)
    }

    /// posix_fadvise(2) SEQUENTIAL: doubles the kernel's readahead window. Only a hint.
    static func adviseSequential(_ descriptor: Int32) {
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_SEQUENTIAL)
    }

    /// mmap(2) read-only, MAP_PRIVATE (copy-on-write: nothing we do reaches the file), then
    /// madvise(MADV_SEQUENTIAL) and MADV_WILLNEED. `offset` must be page aligned.
    static func mapPrivate(
        _ descriptor: Int32, offset: Int64, length: Int, path: String
    ) throws(IOError) -> UnsafeRawBufferPointer {
        let address = unsafe Glibc.mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, off_t(offset))
        guard let address = unsafe address, unsafe address != MAP_FAILED else {
            throw failure("mmap", code: errno, path: path)
        }
        _ = unsafe madvise(address, length, MADV_SEQUENTIAL)
        _ = unsafe madvise(address, length, MADV_WILLNEED)
        return unsafe UnsafeRawBufferPointer(start: address, count: length)
    }

    /// munmap(2).
    static func unmap(_ region: UnsafeRawBufferPointer) {
        guard let base = region.baseAddress else { return }
        _ = unsafe munmap(UnsafeMutableRawPointer(mutating: base), region.count)
    }

    /// The clocks `clockNanoseconds` reads.
    enum ClockID {
        /// `CLOCK_REALTIME`: the wall clock.
        case realTime
        /// `CLOCK_MONOTONIC`: time since boot, never decreasing.
        case monotonic
    }

    /// clock_gettime(2) in nanoseconds. It cannot fail for these clocks on Linux; a failure would read as 0.
    static func clockNanoseconds(_ clock: ClockID) -> Int64 {
        var spec = timespec()
        _ = unsafe clock_gettime(clock == .realTime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// The system page size.
    static let pageSize: Int = Int(sysconf(Int32(_SC_PAGESIZE)))
}

// Outside `Syscall`, whose own `stat` would shadow the C function.
private func systemStat(_ path: UnsafePointer<CChar>, _ status: UnsafeMutablePointer<Glibc.stat>) -> Int32 {
    unsafe stat(path, status)
}

private func systemFlock(_ descriptor: Int32, _ operation: Int32) -> Int32 {
    flock(descriptor, operation)
}
