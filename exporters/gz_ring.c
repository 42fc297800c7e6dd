/* The flight recorder's ring of flushed deflate segments (gz_ring.h). */
#include "gz_ring.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fd_write.h"

/* The segment being written grows by at least this much at a time. */
#define RING_GROW (64u << 10)
/* A dump's head and tail go through deflate in pieces of this much output. */
#define RING_OUT (64u << 10)
/* gzip's header (RFC 1952): deflate, no flags, no time, no extra flags,
 * Unix. The same every dump: a dump's bytes depend only on its contents. */
/* A dump's head or tail at most (zlib's crc32 counts in uInt) */
#define MAX_PART ((size_t)1 << 30)
static const unsigned char gzip_header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };

struct seg {
	unsigned char *p; /* owned */
	size_t n;         /* compressed bytes */
	uint64_t in_len;  /* uncompressed bytes */
	uint32_t crc;     /* CRC-32 of those after the opening */
	int64_t stamp;
	uint64_t seq;     /* segments sealed before it */
	/* the opening: the first open_n compressed bytes, open_in of the
	 * uncompressed, whose CRC-32 is open_crc (0, 0, 0: none) */
	size_t open_n;
	uint64_t open_in;
	uint32_t open_crc;
};

struct gp_gz_ring {
	z_stream zs; /* raw deflate, never finished */
	int level;
	int err;     /* the stream's first failure, sticky */
	size_t max_bytes;
	/* kept segments, oldest at q[head], a circle of cap */
	struct seg *q;
	size_t cap, head, count;
	uint64_t bytes, in_bytes;
	uint64_t dropped_segments, dropped_bytes, dropped_in_bytes;
	uint64_t sealed;   /* segments sealed so far, kept or not */
	/* the segment being written */
	unsigned char *cur;
	size_t cur_n, cur_cap;
	uint64_t cur_in;
	uint32_t cur_crc;  /* of what follows the opening */
	size_t cur_open_n; /* the opening so far marked, as struct seg's */
	uint64_t cur_open_in;
	uint32_t cur_open_crc;
};

static int zerr(int zr)
{
	return zr == Z_MEM_ERROR ? -ENOMEM : zr == Z_STREAM_ERROR ? -EINVAL : -EIO;
}

static int fail(struct gp_gz_ring *r, int err)
{
	if (!r->err)
		r->err = err;
	return r->err;
}

int gp_gz_ring_new(struct gp_gz_ring **out, size_t max_bytes, int level)
{
	struct gp_gz_ring *r;
	int zr;

	*out = NULL;
	if (level < 1 || level > 9 || max_bytes == 0)
		return -EINVAL;
	if (!(r = calloc(1, sizeof(*r))))
		return -ENOMEM;
	/* -15: raw deflate, the full window; the dump writes gzip's wrapper */
	zr = deflateInit2(&r->zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
	if (zr != Z_OK) {
		free(r);
		return zerr(zr);
	}
	r->level = level;
	r->max_bytes = max_bytes;
	*out = r; /* handed over */
	return 0;
}

/* Room for at least RING_GROW more compressed bytes in the segment being
 * written, deflate's output pointed at it. */
static int cur_room(struct gp_gz_ring *r)
{
	if (r->cur_cap - r->cur_n < RING_GROW) {
		size_t cap = r->cur_cap ? r->cur_cap * 2 : 4 * RING_GROW;
		unsigned char *p = realloc(r->cur, cap);

		if (!p)
			return fail(r, -ENOMEM);
		r->cur = p;
		r->cur_cap = cap;
	}
	r->zs.next_out = r->cur + r->cur_n;
	r->zs.avail_out = (uInt)(r->cur_cap - r->cur_n > UINT_MAX ? UINT_MAX
								     : r->cur_cap - r->cur_n);
	return 0;
}

/* Runs deflate over what it was given with flush, until it has nothing more
 * to give; its output stays in the segment being written. */
static int run_deflate(struct gp_gz_ring *r, int flush)
{
	for (;;) {
		uInt room;
		int zr;

		if (cur_room(r))
			return r->err;
		room = r->zs.avail_out;
		zr = deflate(&r->zs, flush);
		r->cur_n += room - r->zs.avail_out;
		if (zr != Z_OK && zr != Z_BUF_ERROR)
			return fail(r, zerr(zr));
		/* done when deflate took everything and had room to spare */
		if (r->zs.avail_in == 0 && r->zs.avail_out != 0)
			return 0;
	}
}

int gp_gz_ring_write(struct gp_gz_ring *r, const void *p, size_t n)
{
	const unsigned char *at = p;

	if (r->err)
		return r->err;
	while (n > 0) {
		uInt piece = n > (1u << 30) ? 1u << 30 : (uInt)n;

		r->cur_crc = (uint32_t)crc32(r->cur_crc, at, piece);
		r->zs.next_in = (Bytef *)at; /* zlib does not write through next_in */
		r->zs.avail_in = piece;
		if (run_deflate(r, Z_NO_FLUSH))
			return r->err;
		r->cur_in += piece;
		at += piece;
		n -= piece;
	}
	return 0;
}

int gp_gz_ring_end_opening(struct gp_gz_ring *r)
{
	if (r->err)
		return r->err;
	if (r->cur_open_in || r->cur_in == 0)
		return fail(r, -EINVAL); /* one opening, and only at the start */
	r->zs.next_in = Z_NULL;
	r->zs.avail_in = 0;
	if (run_deflate(r, Z_FULL_FLUSH))
		return r->err;
	r->cur_open_n = r->cur_n;
	r->cur_open_in = r->cur_in;
	r->cur_open_crc = r->cur_crc;
	r->cur_crc = 0;
	return 0;
}

int gp_gz_ring_discard(struct gp_gz_ring *r)
{
	if (r->err)
		return r->err;
	if (r->cur_open_in)
		return fail(r, -EINVAL);
	/* the kept segments each ended with a full flush: a compressor started
	 * afresh goes on from them as well as the old one would */
	if (deflateReset(&r->zs) != Z_OK)
		return fail(r, -EIO);
	r->cur_n = 0;
	r->cur_in = 0;
	r->cur_crc = 0;
	return 0;
}

static void drop_oldest(struct gp_gz_ring *r)
{
	struct seg *s = &r->q[r->head];

	r->bytes -= s->n;
	r->in_bytes -= s->in_len;
	r->dropped_segments++;
	r->dropped_bytes += s->n;
	r->dropped_in_bytes += s->in_len;
	free(s->p);
	s->p = NULL;
	r->head = (r->head + 1) % r->cap;
	r->count--;
}

/* Room for one more kept segment. */
static int q_room(struct gp_gz_ring *r)
{
	struct seg *q;
	size_t cap;

	if (r->count < r->cap)
		return 0;
	cap = r->cap ? r->cap * 2 : 64;
	if (!(q = malloc(cap * sizeof(*q))))
		return -ENOMEM;
	for (size_t i = 0; i < r->count; i++)
		q[i] = r->q[(r->head + i) % r->cap];
	free(r->q);
	r->q = q;
	r->cap = cap;
	r->head = 0;
	return 0;
}

int gp_gz_ring_seal(struct gp_gz_ring *r, int64_t stamp)
{
	struct seg *s;

	if (r->err)
		return r->err;
	if (r->cur_in == 0)
		return 0;
	r->zs.next_in = Z_NULL;
	r->zs.avail_in = 0;
	if (run_deflate(r, Z_FULL_FLUSH))
		return r->err;
	if (q_room(r))
		return fail(r, -ENOMEM);
	s = &r->q[(r->head + r->count) % r->cap];
	/* the buffer handed over to the kept segment, trimmed to its size */
	s->p = r->cur;
	if (r->cur_n < r->cur_cap) {
		unsigned char *p = realloc(r->cur, r->cur_n);

		if (p)
			s->p = p;
	}
	s->n = r->cur_n;
	s->in_len = r->cur_in;
	s->crc = r->cur_crc;
	s->stamp = stamp;
	s->seq = r->sealed++;
	s->open_n = r->cur_open_n;
	s->open_in = r->cur_open_in;
	s->open_crc = r->cur_open_crc;
	r->count++;
	r->bytes += s->n;
	r->in_bytes += s->in_len;
	r->cur = NULL;
	r->cur_n = r->cur_cap = 0;
	r->cur_in = 0;
	r->cur_crc = 0;
	r->cur_open_n = 0;
	r->cur_open_in = 0;
	r->cur_open_crc = 0;
	while (r->bytes > r->max_bytes && r->count > 1)
		drop_oldest(r);
	return 0;
}

void gp_gz_ring_drop_before(struct gp_gz_ring *r, int64_t stamp)
{
	while (r->count > 0 && r->q[r->head].stamp < stamp)
		drop_oldest(r);
}

/* n bytes at p deflated alone (raw) with flush (Z_FULL_FLUSH: the stream
 * goes on after it; Z_FINISH: it ends) and written to fd. */
static int deflate_to_fd(int fd, const void *p, size_t n, int level, int flush)
{
	z_stream z;
	unsigned char *out;
	int r = 0, zr;

	if (n > MAX_PART)
		return -EINVAL;
	if (!(out = malloc(RING_OUT)))
		return -ENOMEM;
	memset(&z, 0, sizeof(z));
	if ((zr = deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)) != Z_OK) {
		free(out);
		return zerr(zr);
	}
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	do {
		z.next_out = out;
		z.avail_out = RING_OUT;
		zr = deflate(&z, flush);
		if (zr != Z_OK && zr != Z_BUF_ERROR && zr != Z_STREAM_END) {
			r = zerr(zr);
			goto done;
		}
		if ((r = gp_fd_write_all(fd, out, RING_OUT - z.avail_out, NULL)))
			goto done;
	} while (z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
done:
	deflateEnd(&z);
	free(out);
	return r;
}

static void put_le32(unsigned char *p, uint32_t x)
{
	p[0] = (unsigned char)x;
	p[1] = (unsigned char)(x >> 8);
	p[2] = (unsigned char)(x >> 16);
	p[3] = (unsigned char)(x >> 24);
}

/* The kept segments from from_seq on (the first with its opening), then
 * tail, finished, and the trailer: the member so far is *m, which this
 * adds to. */
static int segments_and_end(const struct gp_gz_ring *r, int fd, uint64_t from_seq, struct gp_gz_member *m,
			    const void *tail, size_t tail_len)
{
	unsigned char trailer[8];
	int first = 1, e;

	for (size_t i = 0; i < r->count; i++) {
		const struct seg *s = &r->q[(r->head + i) % r->cap];
		/* the first segment's opening opens the dump; the others' are
		 * passed over, whole deflate blocks ended by a full flush */
		size_t skip = first ? 0 : s->open_n;

		if (s->seq < from_seq)
			continue;
		if ((e = gp_fd_write_all(fd, s->p + skip, s->n - skip, NULL)))
			return e;
		if (first) {
			first = 0;
			m->crc = (uint32_t)crc32_combine(m->crc, s->open_crc, (z_off_t)s->open_in);
			m->in_len += s->open_in;
		}
		m->crc = (uint32_t)crc32_combine(m->crc, s->crc, (z_off_t)(s->in_len - s->open_in));
		m->in_len += s->in_len - s->open_in;
	}
	if ((e = deflate_to_fd(fd, tail, tail_len, r->level, Z_FINISH)))
		return e;
	m->crc = (uint32_t)crc32_combine(m->crc, (uint32_t)crc32(0, tail, (uInt)tail_len), (z_off_t)tail_len);
	m->in_len += tail_len;
	put_le32(trailer, m->crc);
	put_le32(trailer + 4, (uint32_t)m->in_len); /* ISIZE: the length modulo 2^32 */
	return gp_fd_write_all(fd, trailer, sizeof(trailer), NULL);
}

int gp_gz_ring_dump(const struct gp_gz_ring *r, int fd, uint64_t from_seq, const void *head, size_t head_len,
		    const void *tail, size_t tail_len)
{
	struct gp_gz_member m;
	int e;

	if (r->err)
		return r->err;
	if (head_len > MAX_PART || tail_len > MAX_PART)
		return -EINVAL;
	if ((e = gp_fd_write_all(fd, gzip_header, sizeof(gzip_header), NULL)) ||
	    (e = deflate_to_fd(fd, head, head_len, r->level, Z_FULL_FLUSH)))
		return e;
	m.crc = (uint32_t)crc32(0, head, (uInt)head_len);
	m.in_len = head_len;
	return segments_and_end(r, fd, from_seq, &m, tail, tail_len);
}

int gp_gz_ring_dump_after(const struct gp_gz_ring *r, int fd, uint64_t from_seq,
			  const struct gp_gz_member *so_far, const void *tail, size_t tail_len)
{
	struct gp_gz_member m = *so_far;

	if (r->err)
		return r->err;
	if (tail_len > MAX_PART)
		return -EINVAL;
	return segments_and_end(r, fd, from_seq, &m, tail, tail_len);
}

uint64_t gp_gz_ring_next_seq(const struct gp_gz_ring *r)
{
	return r->sealed;
}

void gp_gz_ring_stats(const struct gp_gz_ring *r, struct gp_gz_ring_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->segments = r->count;
	st->bytes = r->bytes;
	st->in_bytes = r->in_bytes;
	st->dropped_segments = r->dropped_segments;
	st->dropped_bytes = r->dropped_bytes;
	st->dropped_in_bytes = r->dropped_in_bytes;
	st->first_stamp = r->count ? r->q[r->head].stamp : INT64_MIN;
	st->last_stamp = r->count ? r->q[(r->head + r->count - 1) % r->cap].stamp : INT64_MIN;
	st->pending_in = r->cur_in;
}

void gp_gz_ring_free(struct gp_gz_ring *r)
{
	if (!r)
		return;
	while (r->count > 0)
		drop_oldest(r);
	free(r->q);
	free(r->cur);
	deflateEnd(&r->zs);
	free(r);
}
