/* All of a buffer to a file descriptor: what the gzip sink and the ring's
 * dumps write with. Inside the profiled process too: it never prints. */
#ifndef GPUPROF_FD_WRITE_H
#define GPUPROF_FD_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* Writes all of buf to fd, riding out EINTR, short writes and a
 * non-blocking fd the host process may have handed over (it polls). 0 or
 * -errno; -EIO where write made no progress and gave no reason. *written
 * (when not NULL) grows by the bytes written, also those before a failure. */
int gp_fd_write_all(int fd, const void *buf, size_t n, uint64_t *written);

#endif
