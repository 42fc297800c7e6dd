/* The merged trace's output (struct mg_out, internal.h): events are
 * appended to its buffer, which goes to the file, through gzip or not, a
 * chunk at a time. Below merge.c, which opens and closes it, and events.c,
 * which fills it. */
#include <errno.h>
#include <unistd.h>

#include "internal.h"

#define OUT_CHUNK (1u << 20)

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int mg_out_drain(struct mg_out *o, int all)
{
	int rc;

	if (o->buf.failed)
		return o->buf.failed;
	if (!all && o->buf.len < OUT_CHUNK)
		return 0;
	rc = o->gz ? gp_gz_write(o->gz, o->buf.data, o->buf.len)
		   : write_all(o->fd, o->buf.data, o->buf.len);
	gp_buf_reset(&o->buf);
	return rc;
}
