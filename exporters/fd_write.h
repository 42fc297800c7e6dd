/* All of a buffer to a file descriptor, and a file's first bytes into
 * another: what the gzip sink and the ring's dumps write with. Inside the
 * profiled process too: it never prints. */
#ifndef GPUPROF_FD_WRITE_H
#define GPUPROF_FD_WRITE_H

#include <stddef.h>
#include <stdint.h>

/* Writes all of buf to fd, riding out EINTR, short writes and a
 * non-blocking fd the host process may have handed over (it polls). 0 or
 * -errno; -EIO where write made no progress and gave no reason. *written
 * (when not NULL) grows by the bytes written, also those before a failure. */
int gp_fd_write_all(int fd, const void *buf, size_t n, uint64_t *written);

/* Copies the first n bytes of the file open as in (read with pread: its
 * offset is left alone) to the end of out. 0 or -errno; -EIO where in is
 * shorter than n (someone else truncated it); out then holds part. */
int gp_fd_copy(int in, uint64_t n, int out);

#endif
