#include "caether_uring.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>

struct caether_uring {
    struct io_uring ring;
};

int caether_uring_create(unsigned entries, caether_uring **out) {
    caether_uring *r = calloc(1, sizeof(*r));
    if (r == NULL) return -ENOMEM;
    int rc = io_uring_queue_init(entries, &r->ring, 0);
    if (rc < 0) {
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void caether_uring_destroy(caether_uring *ring) {
    if (ring == NULL) return;
    io_uring_queue_exit(&ring->ring);
    free(ring);
}

int caether_uring_prep_read(caether_uring *ring, int fd, void *buffer, unsigned length, uint64_t offset,
                            uint64_t tag) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring->ring);
    if (sqe == NULL) return -EBUSY;
    io_uring_prep_read(sqe, fd, buffer, length, offset);
    io_uring_sqe_set_data64(sqe, tag);
    return 0;
}

int caether_uring_submit(caether_uring *ring) {
    for (;;) {
        int rc = io_uring_submit(&ring->ring);
        if (rc != -EINTR) return rc;
    }
}

int caether_uring_wait(caether_uring *ring, uint64_t *tag, int32_t *result) {
    struct io_uring_cqe *cqe = NULL;
    int rc;
    do {
        rc = io_uring_wait_cqe(&ring->ring, &cqe);
    } while (rc == -EINTR);
    if (rc < 0) return rc;
    *tag = io_uring_cqe_get_data64(cqe);
    *result = cqe->res;
    io_uring_cqe_seen(&ring->ring, cqe);
    return 0;
}
