#if canImport(Glibc)
    import Glibc
#endif

/// Replaces a small file atomically: a new temporary file in the same directory (O_EXCL), the bytes,
/// fsync, rename over the target, fsync of the directory. A reader or a crash sees the old content or
/// the new, never a mix, and a failure leaves the target untouched and removes the temporary file.
public enum AtomicFile {
    /// Writes `bytes` to `path` with permission bits `mode` (default 0644).
    public static func write(_ bytes: some Collection<UInt8>, to path: String, mode: UInt32 = 0o644) throws(IOError) {
        try write(bytes, to: FilePath(path), mode: mode)
    }

    /// Writes `bytes` to `path` (bytes, exactly as given) with permission bits `mode` (default 0644).
    public static func write(
        _ bytes: some Collection<UInt8>, to path: FilePath, mode: UInt32 = 0o644
    ) throws(IOError) {
        let directory = path.directory
        let name = path.lastComponent
        let temporary = directory.appending(
            FilePath(
                trusted: Array(".".utf8) + name.bytes
                    + Array(".\(getpid()).\(SecureRandom.uniform(UInt32.max)).tmp".utf8)))
        let descriptor = try Syscall.retryingEINTR("open", path: temporary.description) {
            unsafe temporary.withCString {
                unsafe Glibc.open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            }
        }
        do throws(IOError) {
            defer { Syscall.close(descriptor) }
            let array = Array(bytes)
            var written = 0
            while written < array.count {
                let count = try Syscall.retryingEINTR("write", path: temporary.description) {
                    unsafe array.withUnsafeBytes { raw in
                        unsafe Glibc.write(descriptor, raw.baseAddress! + written, raw.count - written)
                    }
                }
                written += count
            }
            _ = try Syscall.retryingEINTR("fsync", path: temporary.description) { fsync(descriptor) }
            _ = try Syscall.retryingEINTR("rename", path: path.description) {
                unsafe temporary.withCString { from in unsafe path.withCString { to in unsafe rename(from, to) } }
            }
        } catch {
            _ = unsafe temporary.withCString { unsafe unlink($0) }
            throw error
        }
        let directoryDescriptor = try Syscall.retryingEINTR("open", path: directory.description) {
            unsafe directory.withCString { unsafe Glibc.open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }
        defer { Syscall.close(directoryDescriptor) }
        _ = try Syscall.retryingEINTR("fsync", path: directory.description) { fsync(directoryDescriptor) }
    }
}
