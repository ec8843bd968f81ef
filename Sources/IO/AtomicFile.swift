#if canImport(Glibc)
    import Glibc
#endif

/// Replaces a small file atomically: a new temporary file in the same directory (O_EXCL), the bytes,
/// fsync, rename over the target, fsync of the directory. A reader or a crash sees the old content or
/// the new, never a mix, and a failure leaves the target untouched and removes the temporary file.
public enum AtomicFile {
    /// Writes `bytes` to `path` with permission bits `mode` (default 0644).
    public static func write(_ bytes: some Collection<UInt8>, to path: String, mode: UInt32 = 0o644) throws(IOError) {
        let (directory, name) = split(path)
        let temporary = directory + "/." + name + ".\(getpid()).\(SecureRandom.uniform(UInt32.max)).tmp"
        let descriptor = try Syscall.retryingEINTR("open", path: temporary) {
            unsafe Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        }
        do throws(IOError) {
            defer { Syscall.close(descriptor) }
            let array = Array(bytes)
            var written = 0
            while written < array.count {
                let count = try Syscall.retryingEINTR("write", path: temporary) {
                    unsafe array.withUnsafeBytes { raw in
                        unsafe Glibc.write(descriptor, raw.baseAddress! + written, raw.count - written)
                    }
                }
                written += count
            }
            _ = try Syscall.retryingEINTR("fsync", path: temporary) { fsync(descriptor) }
            _ = try Syscall.retryingEINTR("rename", path: path) { unsafe rename(temporary, path) }
        } catch {
            _ = unsafe unlink(temporary)
            throw error
        }
        let directoryDescriptor = try Syscall.retryingEINTR("open", path: directory) {
            unsafe Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        defer { Syscall.close(directoryDescriptor) }
        _ = try Syscall.retryingEINTR("fsync", path: directory) { fsync(directoryDescriptor) }
    }

    /// The directory part ("." when none) and the file name of `path`.
    private static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
