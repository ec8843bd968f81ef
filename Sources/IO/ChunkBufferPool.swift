import Synchronization

/// A bounded pool of page-aligned chunk buffers, reused from chunk to chunk.
///
/// Reuse matters: on these machines writing into freshly allocated memory runs at about 1 GB/s
/// (every page faults in), against 11-22 GB/s into memory that was written before. The pool keeps at
/// most `capacity` idle buffers; a consumer that holds more chunks than planned gets fresh buffers
/// (never a deadlock), and those are freed when released. Buffers are wiped before they are freed,
/// since they held file data (HybridIOEngine checklist).
final class ChunkBufferPool: Sendable {
    /// Bytes in every buffer.
    let bufferSize: Int
    /// How many idle buffers the pool keeps.
    let capacity: Int
    /// Alignment of each buffer: 16 KiB, the largest page size Aether runs on (HybridIOEngine).
    static let alignment = 16 * 1024

    private let idle: Mutex<[AlignedBuffer]>
    private let allocations = Atomic<Int>(0)

    /// A pool of buffers of `bufferSize` bytes keeping up to `capacity` of them.
    init(bufferSize: Int, capacity: Int) {
        precondition(bufferSize > 0 && capacity > 0, "pool sizes are positive")
        self.bufferSize = bufferSize
        self.capacity = capacity
        self.idle = Mutex([])
    }

    /// A buffer, reused when one is idle.
    func acquire() -> AlignedBuffer {
        if let buffer = idle.withLock({ $0.popLast() }) { return buffer }
        allocations.add(1, ordering: .relaxed)
        return AlignedBuffer(byteCount: bufferSize, alignment: Self.alignment)
    }

    /// Returns `buffer`; kept for reuse when the pool has room, else wiped and freed now.
    func release(_ buffer: AlignedBuffer) {
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < capacity else { return false }
            idle.append(buffer)
            return true
        }
        if !kept { buffer.wipeAndFree() }
    }

    /// How many buffers were ever allocated (tests check reuse with it).
    var allocationCount: Int { allocations.load(ordering: .relaxed) }

    deinit {
        for buffer in idle.withLock({ $0 }) { buffer.wipeAndFree() }
    }
}
