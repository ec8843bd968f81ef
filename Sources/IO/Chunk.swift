/// One chunk of a file as read: its index, where it lies, and its bytes.
///
/// The bytes live in a pooled buffer (pread, io_uring) or a private mapping (mmap); they go back to
/// the pool, or are unmapped, as soon as the last reference to the chunk is dropped, so hold a chunk
/// only as long as it is needed.
public final class Chunk: @unchecked Sendable {
    // @unchecked: the bytes are written once, before the chunk is handed out, and only read after;
    // the storage is released in deinit, after the last reference is gone.

    /// Zero-based position of the chunk in the read.
    public let index: Int
    /// Offset of the first byte in the file.
    public let offset: Int64
    /// Number of bytes.
    public let count: Int

    private let storage: Storage

    @safe enum Storage {
        case pooled(AlignedBuffer, ChunkBufferPool)
        case mapped(region: UnsafeRawBufferPointer, skip: Int)
    }

    init(index: Int, offset: Int64, count: Int, storage: Storage) {
        self.index = index
        self.offset = offset
        self.count = count
        self.storage = storage
    }

    /// Calls `body` with the chunk's bytes. Do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        switch storage {
        case .pooled(let buffer, _):
            return try unsafe body(UnsafeRawBufferPointer(rebasing: buffer.memory[0..<count]))
        case .mapped(let region, let skip):
            return try unsafe body(UnsafeRawBufferPointer(rebasing: region[skip..<(skip + count)]))
        }
    }

    /// A copy of the bytes (for small chunks and tests; large uploads should use `withUnsafeBytes`).
    public var bytes: [UInt8] { unsafe withUnsafeBytes { unsafe Array($0) } }

    deinit {
        switch storage {
        case .pooled(let buffer, let pool): pool.release(buffer)
        case .mapped(let region, _): unsafe Syscall.unmap(region)
        }
    }
}
