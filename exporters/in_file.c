/* Inputs opened only when they are regular files (in_file.h). */
#include "in_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gp_in_open(const char *path)
{
	/* O_NONBLOCK: opening a FIFO with no writer would wait for one */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	int rc, flags;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto fail;
	}
	/* a regular file: reads as usual from here */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		rc = -errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return rc;
}

const char *gp_in_strerror(int rc)
{
	return rc == -EINVAL ? "not a regular file (a FIFO, socket or device is not read)"
			     : strerror(-rc);
}
