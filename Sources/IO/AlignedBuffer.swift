/// One aligned allocation handed between threads by the pool.
@safe struct AlignedBuffer: @unchecked Sendable {
    // @unchecked: a buffer has one owner at a time (the pool, a reader, or one Chunk) and moves
    // between threads only through the pool's lock or a chunk's hand-off.
    let memory: UnsafeMutableRawBufferPointer

    init(byteCount: Int, alignment: Int) {
        unsafe memory = UnsafeMutableRawBufferPointer.allocate(byteCount: byteCount, alignment: alignment)
    }

    func wipeAndFree() {
        unsafe Sodium.wipe(memory)
        unsafe memory.deallocate()
    }
}
