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
    /// Returns the address range advised (nil when the buffer spans less than one whole huge page).
    @discardableResult
    static func advise(_ base: UnsafeMutableRawPointer, count: Int) -> Range<Int>? {
        let range = alignedRange(address: Int(bitPattern: base), count: count)
        #if os(Linux)
            if let range, let aligned = unsafe UnsafeMutableRawPointer(bitPattern: range.lowerBound) {
                _ = unsafe madvise(aligned, range.count, MADV_HUGEPAGE)
            }
        #endif
        return range
    }

    /// The whole huge pages inside `count` bytes at `address`, when the buffer is large enough to be worth it
    /// (two huge pages or more).
    static func alignedRange(address: Int, count: Int) -> Range<Int>? {
        guard count >= 2 * size else { return nil }
        let start = (address + size - 1) & ~(size - 1)
        let end = (address + count) & ~(size - 1)
        return end > start ? start..<end : nil
    }
}
