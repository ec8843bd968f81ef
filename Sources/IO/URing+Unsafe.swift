internal import CAetherURing

/// One io_uring instance, through the opaque CAetherURing wrapper. Nothing else in this module
/// imports it. Not `Sendable`: the reader that created it submits and reaps on one thread.
@safe final class URingQueue {
    private let ring: OpaquePointer

    /// caether_uring_create. A refusal (EPERM, ENOSYS in containers; ENOMEM under a memlock limit)
    /// is `.ioUringUnavailable` with the errno, so the caller can fall back to pread.
    init(entries: UInt32) throws(IOError) {
        var out: OpaquePointer?
        let rc = unsafe caether_uring_create(entries, &out)
        guard rc == 0, let out = unsafe out else {
            throw IOError(.ioUringUnavailable, "io_uring setup refused", errno: -rc)
        }
        unsafe ring = out
    }

    /// caether_uring_prep_read: queues a read into `buffer` at `offset`, tagged `tag`.
    func prepareRead(
        descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: Int64, tag: UInt64, path: String
    ) throws(IOError) {
        let rc = unsafe caether_uring_prep_read(
            ring, descriptor, buffer.baseAddress, UInt32(buffer.count), UInt64(offset), tag)
        guard rc == 0 else { throw Syscall.failure("io_uring_get_sqe", code: -rc, path: path) }
    }

    /// caether_uring_submit (EINTR retried inside).
    func submit(path: String) throws(IOError) {
        let rc = unsafe caether_uring_submit(ring)
        guard rc >= 0 else { throw Syscall.failure("io_uring_submit", code: -rc, path: path) }
    }

    /// caether_uring_wait: one completion, as (tag, bytes read or negative errno of the read).
    func waitForCompletion(path: String) throws(IOError) -> (tag: UInt64, result: Int32) {
        var tag: UInt64 = 0
        var result: Int32 = 0
        let rc = unsafe caether_uring_wait(ring, &tag, &result)
        guard rc == 0 else { throw Syscall.failure("io_uring_wait_cqe", code: -rc, path: path) }
        return (tag, result)
    }

    /// caether_uring_destroy
    deinit { unsafe caether_uring_destroy(ring) }
}
