#if canImport(Glibc)
    import Glibc
#endif

/// Transparent huge pages for the large symbol buffers of RaptorQ (the L intermediate symbols, the K source
/// symbols: 17 MB each for a 16 MiB block). The solver reads them at scattered symbols, so with 4 KiB pages
/// nearly every read also misses the TLB, and each first touch of a page is a page fault of its own; 2 MiB
/// pages take both away. The kernel here gives huge pages only where madvise asks (`enabled` = madvise).
enum HugePages {
    /// Huge page size on x86-64 and arm64 Linux.
    static let size = 2 << 20

    /// madvise(MADV_HUGEPAGE) on the 2 MiB-aligned part of `count` bytes at `base`, which must not be touched
    /// yet for the advice to take effect at the first touch. Best effort: a refusal leaves 4 KiB pages.
    static func advise(_ base: UnsafeMutableRawPointer, count: Int) {
        #if os(Linux)
            guard count >= 2 * size else { return }
            let address = Int(bitPattern: base)
            let start = (address + size - 1) & ~(size - 1)
            let end = (address + count) & ~(size - 1)
            guard end > start, let aligned = unsafe UnsafeMutableRawPointer(bitPattern: start) else { return }
            _ = unsafe madvise(aligned, end - start, MADV_HUGEPAGE)
        #endif
    }
}
