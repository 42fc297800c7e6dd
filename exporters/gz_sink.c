/* One gzip member streamed to a file descriptor (see gz_sink.h).
 *
 * This runs inside the profiled process (the injected library): it never
 * prints, aborts or raises signals on its own; every failure is a return
 * value, and the first one sticks so the owner can report it once. */
#include "gz_sink.h"

#include "fd_write.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>

/* Large enough that write(2) calls are rare next to deflate's work, small
 * enough to not matter inside a process that may be short of memory. */
#define GZ_OUT_SIZE (256u * 1024u)
/* z_stream counts in uInt; feed it at most this much per deflate call. */
#define GZ_MAX_CHUNK (1u << 30)

struct gp_gz_sink {
	z_stream zs;
	int fd;           /* owned */
	int err;          /* first error, sticky */
	int finished;     /* trailer written: no more data accepted */
	unsigned char *out;
	uint64_t bytes_in;
	uint64_t bytes_out;
};

static int set_err(struct gp_gz_sink *s, int err)
{
	if (!s->err)
		s->err = err;
	return s->err;
}

static int zerr(int zr)
{
	return zr == Z_MEM_ERROR ? -ENOMEM : -EIO;
}

/* Writes out whatever deflate has produced and hands it the whole buffer again. */
static int drain(struct gp_gz_sink *s)
{
	size_t have = GZ_OUT_SIZE - s->zs.avail_out;
	int r = gp_fd_write_all(s->fd, s->out, have, &s->bytes_out);

	s->zs.next_out = s->out;
	s->zs.avail_out = GZ_OUT_SIZE;
	return r ? set_err(s, r) : 0;
}

int gp_gz_open_fd(struct gp_gz_sink **out, int fd, int level)
{
	struct gp_gz_sink *s = NULL;
	int r, zr;

	*out = NULL;
	if (fd < 0 || level < 1 || level > 9) {
		r = -EINVAL;
		goto fail;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		r = -ENOMEM;
		goto fail;
	}
	s->out = malloc(GZ_OUT_SIZE);
	if (!s->out) {
		r = -ENOMEM;
		goto fail_free;
	}
	/* 15 + 16: full window, gzip wrapper (header + CRC32/ISIZE trailer). */
	zr = deflateInit2(&s->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (zr != Z_OK) {
		r = zr == Z_STREAM_ERROR ? -EINVAL : zerr(zr);
		goto fail_free;
	}
	s->zs.next_out = s->out;
	s->zs.avail_out = GZ_OUT_SIZE;
	s->fd = fd;
	*out = s;
	return 0;

fail_free:
	free(s->out);
	free(s);
fail:
	/* Ownership of fd passed to us even on failure, so the caller never has
	 * to guess whether to close it. */
	if (fd >= 0)
		close(fd);
	return r;
}

int gp_gz_write(struct gp_gz_sink *s, const void *data, size_t len)
{
	const unsigned char *p = data;

	if (s->err)
		return s->err;
	if (s->finished)
		return -EINVAL;
	while (len > 0) {
		uInt chunk = len > GZ_MAX_CHUNK ? GZ_MAX_CHUNK : (uInt)len;

		s->zs.next_in = (Bytef *)p; /* zlib does not write through next_in */
		s->zs.avail_in = chunk;
		do {
			int zr = deflate(&s->zs, Z_NO_FLUSH);

			/* Z_BUF_ERROR only means "no room to progress": the
			 * drain below makes room. */
			if (zr != Z_OK && zr != Z_BUF_ERROR)
				return set_err(s, zerr(zr));
			if (s->zs.avail_out == 0 && drain(s))
				return s->err;
		} while (s->zs.avail_in > 0);
		s->bytes_in += chunk;
		p += chunk;
		len -= chunk;
	}
	return 0;
}

/* Runs deflate with `flush` until it has nothing more to emit, then writes
 * everything out, so the file holds a decodable prefix (or the whole member). */
static int deflate_all(struct gp_gz_sink *s, int flush)
{
	int zr;

	s->zs.next_in = Z_NULL;
	s->zs.avail_in = 0;
	for (;;) {
		zr = deflate(&s->zs, flush);
		if (zr != Z_OK && zr != Z_BUF_ERROR && zr != Z_STREAM_END)
			return set_err(s, zerr(zr));
		if (s->zs.avail_out != 0 && (flush != Z_FINISH || zr == Z_STREAM_END))
			break; /* deflate had room to spare: it emitted everything */
		if (drain(s))
			return s->err;
	}
	return drain(s);
}

int gp_gz_flush(struct gp_gz_sink *s)
{
	if (s->err)
		return s->err;
	if (s->finished)
		return 0; /* the trailer is out: everything is already on disk */
	return deflate_all(s, Z_FULL_FLUSH); /* GP_GZ_FLUSH_KIND */
}

int gp_gz_finish(struct gp_gz_sink *s)
{
	int r;

	if (s->err)
		return s->err;
	if (s->finished)
		return 0;
	r = deflate_all(s, Z_FINISH);
	if (!r)
		s->finished = 1;
	return r;
}

/* Frees everything but the fd (already closed); returns the sticky error. */
static int release(struct gp_gz_sink *s)
{
	int err = s->err;

	deflateEnd(&s->zs);
	free(s->out);
	free(s);
	return err;
}

int gp_gz_close(struct gp_gz_sink *s)
{
	if (!s)
		return 0;
	if (!s->err && !s->finished)
		gp_gz_finish(s);
	if (!s->err && fsync(s->fd) < 0) {
		/* Pipes, sockets and some filesystems cannot sync: not our
		 * problem. I/O or space errors mean data is lost: report. */
		if (errno == EIO || errno == ENOSPC || errno == EDQUOT)
			set_err(s, -errno);
	}
	/* Linux releases the fd even when close() fails (EINTR included), so it
	 * is never retried; NFS-style late write errors are still reported. */
	if (close(s->fd) < 0 && (errno == EIO || errno == ENOSPC || errno == EDQUOT))
		set_err(s, -errno);
	return release(s);
}

int gp_gz_sync_point(struct gp_gz_sink *s, struct gp_gz_member *so_far, uint64_t *file_bytes)
{
	int err;

	if (s->finished)
		return -EINVAL;
	if ((err = gp_gz_flush(s)))
		return err;
	/* with the gzip wrapper, zlib keeps the running CRC-32 in adler */
	so_far->crc = (uint32_t)s->zs.adler;
	so_far->in_len = s->bytes_in;
	*file_bytes = s->bytes_out;
	return 0;
}

int gp_gz_hand_over(struct gp_gz_sink *s, int *fd, struct gp_gz_member *so_far)
{
	uint64_t file_bytes;
	int err;

	*fd = -1;
	if ((err = gp_gz_sync_point(s, so_far, &file_bytes))) {
		gp_gz_abandon(s);
		return err;
	}
	*fd = s->fd;
	return release(s);
}

int gp_gz_move_to(struct gp_gz_sink *s, int fd)
{
	int err;

	if (s->finished)
		err = -EINVAL;
	else if ((err = gp_gz_flush(s)) == 0)
		err = gp_fd_copy(s->fd, s->bytes_out, fd); /* -EIO: shorter than written, not ours now */
	if (err) {
		close(fd);
		return set_err(s, err);
	}
	close(s->fd);
	s->fd = fd;
	return 0;
}

void gp_gz_abandon(struct gp_gz_sink *s)
{
	if (!s)
		return;
	close(s->fd);
	release(s);
}

uint64_t gp_gz_bytes_in(const struct gp_gz_sink *s)
{
	return s->bytes_in;
}

uint64_t gp_gz_bytes_out(const struct gp_gz_sink *s)
{
	return s->bytes_out;
}
