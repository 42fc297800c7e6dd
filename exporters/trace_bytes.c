/* A trace's raw bytes: from a file, whose descriptor is held only while
 * it is among the last used (at most gp_tr_max_open() open at once, the
 * others closed and reopened at their place), or from memory; and the
 * end of a gzip member. Below both trace_reader.c (lines) and
 * trace_chunks.c (the same stream on worker threads): see
 * trace_reader_int.h. */
#include "trace_reader.h"
#include "trace_reader_int.h"

#include "env_vars.h"
#include "in_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file inputs holding a descriptor, most recently used first. One
 * thread reads inputs (analyze, merge): no lock. */
static struct {
	struct gp_tr *newest, *oldest;
	size_t n;
} open_files;

size_t gp_tr_max_open(void)
{
	static size_t max;
	struct rlimit rl;
	const char *env;

	if (max)
		return max;
	max = 256;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 4 < max)
		max = rl.rlim_cur / 4 < 16 ? 16 : (size_t)(rl.rlim_cur / 4);
	env = getenv(GP_ENV_MAX_OPEN_INPUTS);
	if (env && atoi(env) > 0 && (size_t)atoi(env) < max)
		max = (size_t)atoi(env);
	return max;
}

void gp_tr_files_remove(struct gp_tr *in)
{
	if (in->newer)
		in->newer->older = in->older;
	else
		open_files.newest = in->older;
	if (in->older)
		in->older->newer = in->newer;
	else
		open_files.oldest = in->newer;
	in->newer = in->older = NULL;
	open_files.n--;
}

void gp_tr_files_add(struct gp_tr *in)
{
	in->older = open_files.newest;
	in->newer = NULL;
	if (open_files.newest)
		open_files.newest->newer = in;
	else
		open_files.oldest = in;
	open_files.newest = in;
	open_files.n++;
}

/* Closes in's descriptor, keeping its place; what it has read but not yet
 * used stays, and buffers it does not need meanwhile are given back. */
static void suspend(struct gp_tr *in)
{
	in->pos = lseek(in->fd, 0, SEEK_CUR);
	close(in->fd);
	in->fd = -1;
	gp_tr_files_remove(in);
	if (in->gz && in->zs.avail_in == 0) {
		free(in->zbuf);
		in->zbuf = NULL;
	}
	if (in->start > 0) {
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->buf_off += in->start;
		in->end -= in->start;
		in->start = 0;
	}
	/* what is unread, in a page or so (realloc copies only that much) */
	if (in->cap > in->end + 4096) {
		char *b = realloc(in->buf, in->end + 4096);

		if (b) {
			in->buf = b;
			in->cap = in->end + 4096;
		}
	}
}

/* Room for another descriptor: the least recently used one closed. */
void gp_tr_files_make_room(void)
{
	while (open_files.n >= gp_tr_max_open() && open_files.oldest)
		suspend(open_files.oldest);
}

/* in's descriptor again (the same file), at its place. 0 or -errno. */
static int resume(struct gp_tr *in)
{
	struct stat st;
	int fd;

	gp_tr_files_make_room();
	fd = gp_in_open(in->path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0 || st.st_dev != in->dev || st.st_ino != in->ino ||
	    lseek(fd, in->pos, SEEK_SET) != in->pos) {
		close(fd);
		return -ESTALE; /* replaced while it was being read */
	}
	in->fd = fd;
	gp_tr_files_add(in);
	return 0;
}

/* Up to n raw bytes into p; 0 at the end. */
ssize_t gp_tr_raw_read(struct gp_tr *in, unsigned char *p, size_t n)
{
	ssize_t r;

	if (!in->path) {
		size_t left = in->mem_len - in->mem_pos;

		if (n > left)
			n = left;
		memcpy(p, in->mem + in->mem_pos, n);
		in->mem_pos += n;
		in->st.bytes_in += n;
		return (ssize_t)n;
	}
	if (in->fd < 0) {
		int err = resume(in);

		if (err) {
			in->st.io_errno = -err;
			return -1;
		}
	} else if (open_files.newest != in) {
		gp_tr_files_remove(in);
		gp_tr_files_add(in);
	}
	do
		r = read(in->fd, p, n);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		in->st.io_errno = errno;
		return -1;
	}
	in->st.bytes_in += (uint64_t)r;
	return r;
}

/* More compressed input when zlib has used what it had. 0, or -EIO. */
int gp_tr_refill_z(struct gp_tr *in)
{
	ssize_t r;

	if (in->zs.avail_in || in->raw_eof)
		return 0;
	r = gp_tr_raw_read(in, in->zbuf, in->zbuf_cap);
	if (r < 0)
		return -EIO;
	if (r == 0)
		in->raw_eof = 1;
	in->zs.next_in = in->zbuf;
	in->zs.avail_in = (uInt)r;
	return 0;
}

/* After a member: skips the raw member's trailer, then either ends or goes
 * on with the next member in zlib's gzip mode. 0, or -EIO / -ENOMEM. */
int gp_tr_member_end(struct gp_tr *in)
{
	if (in->gz_raw) {
		size_t left = 8; /* CRC-32 and size */

		while (left) {
			size_t k;

			if (gp_tr_refill_z(in))
				return -EIO;
			if (!in->zs.avail_in) {
				in->st.gzip_cut = 1; /* the trailer itself is cut */
				in->st.done = 1;
				return 0;
			}
			k = in->zs.avail_in < left ? in->zs.avail_in : left;
			in->zs.next_in += k;
			in->zs.avail_in -= (uInt)k;
			left -= k;
		}
	}
	if (gp_tr_refill_z(in))
		return -EIO;
	if (in->zs.avail_in >= 2 && in->zs.next_in[0] == 0x1f && in->zs.next_in[1] == 0x8b) {
		if (in->gz_raw) {
			inflateEnd(&in->zs);
			in->z_ready = 0;
			{
				Bytef *next = in->zs.next_in;
				uInt avail = in->zs.avail_in;

				memset(&in->zs, 0, sizeof(in->zs));
				if (inflateInit2(&in->zs, 15 + 16) != Z_OK)
					return -ENOMEM;
				in->zs.next_in = next;
				in->zs.avail_in = avail;
			}
			in->z_ready = 1;
			in->gz_raw = 0;
		} else {
			inflateReset(&in->zs);
		}
		return 0;
	}
	/* trailing bytes that are not gzip are ignored, as gzip does */
	in->raw_eof = 1;
	in->zs.avail_in = 0;
	in->st.done = 1;
	return 0;
}
