/// How a file's bytes are read.
public enum ReadStrategy: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `pread(2)` into pooled, 16 KiB-aligned buffers, with `posix_fadvise(WILLNEED)` read-ahead.
    case pread
    /// A private mapping per chunk (`mmap` MAP_PRIVATE, `madvise` SEQUENTIAL and WILLNEED): no copy.
    /// Not safe against truncation by another process: touching a page past the new end raises SIGBUS,
    /// which kills the process. Only for files nobody else can truncate; the command line never offers it.
    case mmap
    /// io_uring reads into pooled buffers, with the next chunks' reads in flight in the kernel.
    case ioUring

    public var description: String { rawValue }

    /// The strategy for reading `length` bytes in chunks of `chunkSize` when the caller did not pick one.
    ///
    /// The decision (HybridIOEngine "decision matrix", Linux edition):
    /// 1. Under 1 MiB in all, or chunks under 64 KiB: `pread`. One or a few system calls beat setting
    ///    up a ring or a mapping, and small mappings cost a syscall pair per chunk.
    /// 2. Otherwise, when io_uring works on this kernel (not refused with EPERM/ENOSYS, as in many
    ///    containers): `ioUring`. The next `prefetchChunks` reads wait in the kernel while the current
    ///    chunk is hashed, which hides device latency on cold files without a reader thread.
    /// 3. Otherwise `pread` with kernel read-ahead hints.
    ///
    /// `mmap` is never chosen automatically on Linux: a file truncated by another process while a
    /// window is being hashed raises SIGBUS, which no typed error can catch. It stays available when
    /// asked for (`ChunkReadOptions.strategy`), e.g. for files the caller owns. A 32-bit platform is
    /// refused at compile time (Platform.swift), so mappings never exhaust the address space.
    public static func decide(length: Int64, chunkSize: Int, ioUringAvailable: Bool) -> ReadStrategy {
        if length < 1 << 20 || chunkSize < 64 << 10 { return .pread }
        return ioUringAvailable ? .ioUring : .pread
    }
}
