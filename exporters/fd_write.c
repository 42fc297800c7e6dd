/* All of a buffer to a file descriptor (fd_write.h). */
#include "fd_write.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

int gp_fd_write_all(int fd, const void *buf, size_t n, uint64_t *written)
{
	const unsigned char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };

				if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
					return -errno;
				continue;
			}
			return -errno;
		}
		if (w == 0)
			return -EIO; /* no progress and no reason: do not spin */
		p += w;
		n -= (size_t)w;
		if (written)
			*written += (uint64_t)w;
	}
	return 0;
}

int gp_fd_copy(int in, uint64_t n, int out)
{
	enum { CHUNK = 256 << 10 };
	uint64_t at = 0;
	char *buf = malloc(CHUNK);
	int err = buf ? 0 : -ENOMEM;

	while (!err && at < n) {
		uint64_t left = n - at;
		ssize_t r = pread(in, buf, left < CHUNK ? (size_t)left : CHUNK, (off_t)at);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			err = r < 0 ? -errno : -EIO;
		else if ((err = gp_fd_write_all(out, buf, (size_t)r, NULL)) == 0)
			at += (uint64_t)r;
	}
	free(buf);
	return err;
}
