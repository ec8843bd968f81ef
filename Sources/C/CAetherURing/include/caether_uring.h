#ifndef CAETHER_URING_H
#define CAETHER_URING_H
// Opaque wrapper of liburing. This header deliberately includes no liburing, glibc socket or
// feature-macro headers: liburing's own header redefines _GNU_SOURCE/_XOPEN_SOURCE and breaks
// clean builds of any Swift target that also imports Foundation (see STYLE.md).
#include <stddef.h>
#include <stdint.h>

typedef struct caether_uring caether_uring;

/// Creates a ring with `entries` submission slots. Returns 0 and sets *out, or a negative errno
/// (-EPERM / -ENOSYS where io_uring is refused, as in many containers).
int caether_uring_create(unsigned entries, caether_uring **out);

/// Tears the ring down. Accepts NULL.
void caether_uring_destroy(caether_uring *ring);

/// Queues a read of `length` bytes at `offset` into `buffer`, tagged with `tag`.
/// Returns 0, or -EBUSY when the submission queue is full.
int caether_uring_prep_read(caether_uring *ring, int fd, void *buffer, unsigned length, uint64_t offset,
                            uint64_t tag);

/// Submits every queued read. Returns the number submitted or a negative errno.
int caether_uring_submit(caether_uring *ring);

/// Waits for one completion. Returns 0 and fills *tag and *result (bytes read, or a negative errno
/// of the read itself), or a negative errno of the wait.
int caether_uring_wait(caether_uring *ring, uint64_t *tag, int32_t *result);

#endif
