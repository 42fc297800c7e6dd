/* Trace bytes to lines, see trace_reader.h. */
#include "trace_reader.h"
#include "trace_reader_int.h"
#include "trace_scan.h"

#include "env_vars.h"
#include "in_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Buffers that a file's suspension (trace_bytes.c) gave back, before
 * reading on. */
static int restore_buffers(struct gp_tr *in)
{
	if (in->cap < DCHUNK) {
		char *b = realloc(in->buf, DCHUNK);

		if (!b)
			return -ENOMEM;
		in->buf = b;
		in->cap = DCHUNK;
	}
	if (!in->zbuf && in->detected) {
		in->zbuf_cap = ZCHUNK;
		in->zbuf = malloc(in->zbuf_cap);
		if (!in->zbuf)
			return -ENOMEM;
	}
	return 0;
}

unsigned gp_tr_threads(void)
{
	const char *env = getenv(GP_ENV_THREADS);
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	/* Unasked, at most GP_TR_DEFAULT_THREADS: the one thread that analyzes
	 * what the workers inflate, scan and decode is the limit; on 16 cores
	 * 16 read a 1 GiB trace little quicker than 8 (bench/RESULTS.md,
	 * "Analyzer speed"), and the traces of a run directory together keep
	 * twice the workers' chunks in flight. */
	if (n > GP_TR_DEFAULT_THREADS)
		n = GP_TR_DEFAULT_THREADS;
	if (env && atoi(env) > 0)
		n = atoi(env);
	return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

static struct gp_tr *new_reader(void)
{
	struct gp_tr *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->fd = -1;
	in->threads = gp_tr_threads();
	in->cap = DCHUNK;
	in->buf = malloc(in->cap);
	if (!in->buf) {
		free(in);
		return NULL;
	}
	return in;
}

int gp_tr_open_file(struct gp_tr **out, const char *path)
{
	struct gp_tr *in;
	struct stat st;
	int err;

	*out = NULL;
	if (!(in = new_reader()))
		return -ENOMEM;
	gp_tr_files_make_room();
	/* a regular file only: a FIFO or a device would block or never end */
	in->fd = gp_in_open(path);
	if (in->fd < 0) {
		err = in->fd;
		in->fd = -1;
		goto fail;
	}
	if (fstat(in->fd, &st) != 0 || !(in->path = strdup(path))) {
		err = in->path ? -errno : -ENOMEM;
		close(in->fd);
		in->fd = -1;
		goto fail;
	}
	in->dev = st.st_dev;
	in->ino = st.st_ino;
	in->st.size = (uint64_t)st.st_size;
	gp_tr_files_add(in);
	*out = in; /* handed over */
	return 0;
fail:
	gp_tr_close(in);
	return err;
}

int gp_tr_open_mem(struct gp_tr **out, const void *p, size_t n)
{
	struct gp_tr *in;

	*out = NULL;
	if (!(in = new_reader()))
		return -ENOMEM;
	in->mem = p;
	in->mem_len = n;
	in->st.size = n;
	*out = in; /* handed over */
	return 0;
}

void gp_tr_set_threads(struct gp_tr *in, unsigned threads)
{
	in->threads = threads;
}

void gp_tr_set_scan(struct gp_tr *in, int scan)
{
	in->scan = scan;
}

void gp_tr_set_skip_ignored(struct gp_tr *in, int skip)
{
	in->skip_ignored = skip;
}

int gp_tr_set_decoder(struct gp_tr *in, gp_tr_decode_fn fn, size_t rec_size)
{
	if (!fn || !rec_size || rec_size > GP_TR_MAX_REC)
		return -EINVAL;
	in->decode = fn;
	in->rec_size = rec_size;
	return 0;
}

int gp_tr_scanned(struct gp_tr *in, const char *p, size_t n, struct gp_tr_members *out)
{
	if (!in->chunks || !out->skip_ignored)
		return 0;
	if (p == in->direct_line)
		return gp_tr_chunks_scanned(in, in->direct_off, p, n, out);
	if (p < in->buf || p > in->buf + in->end)
		return 0;
	return gp_tr_chunks_scanned(in, in->buf_off + (uint64_t)(p - in->buf), p, n, out);
}

void gp_tr_set_chunk_min(struct gp_tr *in, size_t bytes)
{
	in->chunk_min = bytes;
}

const struct gp_tr_state *gp_tr_state(const struct gp_tr *in)
{
	return &in->st;
}

void gp_tr_close(struct gp_tr *in)
{
	if (!in)
		return;
	if (in->fd >= 0) {
		close(in->fd);
		gp_tr_files_remove(in);
	}
	gp_tr_chunks_free(in);
	if (in->z_ready)
		inflateEnd(&in->zs);
	free(in->zbuf);
	free(in->buf);
	free(in->path);
	free(in);
}


/* The length of the gzip member header at p[0..n) (RFC 1952), or 0 when
 * it is not all there or not one zlib's raw mode can follow. */
static size_t gzip_header_len(const unsigned char *p, size_t n)
{
	size_t at = 10;
	unsigned flg;

	if (n < 10 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8)
		return 0;
	flg = p[3];
	if (flg & 0xE0)
		return 0;
	if (flg & 4) { /* FEXTRA */
		if (n < at + 2)
			return 0;
		at += 2 + (size_t)(p[at] | p[at + 1] << 8);
	}
	for (unsigned f = 8; f <= 16; f <<= 1) { /* FNAME, FCOMMENT */
		if (!(flg & f))
			continue;
		while (at < n && p[at])
			at++;
		if (at >= n)
			return 0;
		at++;
	}
	if (flg & 2) /* FHCRC */
		at += 2;
	return at <= n ? at : 0;
}

/* Looks at the first bytes: gzip magic or not. The first gzip member is
 * inflated raw, its header read here and its trailer skipped: zlib's own
 * gzip mode would also compute the CRC-32 of everything, a tenth of the
 * reading time, for a check the JSON reader makes anyway (damage shows as
 * bad JSON). Later members, if any, go through zlib's gzip mode. */
static int detect(struct gp_tr *in)
{
	ssize_t r;
	size_t hdr;

	in->zbuf_cap = ZCHUNK;
	in->zbuf = malloc(in->zbuf_cap);
	if (!in->zbuf)
		return -ENOMEM;
	in->detected = 1;
	r = gp_tr_raw_read(in, in->zbuf, in->zbuf_cap);
	if (r < 0)
		return -EIO;
	if (r == 0)
		in->raw_eof = 1;
	if (r >= 2 && in->zbuf[0] == 0x1f && in->zbuf[1] == 0x8b) {
		in->gz = 1;
		in->st.gzip = 1;
		hdr = gzip_header_len(in->zbuf, (size_t)r);
		in->gz_raw = hdr != 0;
		/* the first member in chunks, on workers where there are any */
		if (hdr && in->threads > 0)
			return gp_tr_chunks_start(in, in->zbuf + hdr, (size_t)r - hdr);
		if (inflateInit2(&in->zs, hdr ? -15 : 15 + 16) != Z_OK)
			return -ENOMEM;
		in->z_ready = 1;
		in->zs.next_in = in->zbuf + hdr;
		in->zs.avail_in = (uInt)((size_t)r - hdr);
		return 0;
	}
	/* plain: what was read is data */
	if (in->cap < (size_t)r)
		return -ENOMEM; /* cannot happen: DCHUNK > ZCHUNK */
	memcpy(in->buf, in->zbuf, (size_t)r);
	in->end = (size_t)r;
	return 0;
}


/* Appends decompressed (or plain) bytes at buf+end, at most room bytes.
 * Returns bytes added, 0 at the end of data, -EIO or -ENOMEM. */
static ssize_t fill(struct gp_tr *in, size_t room)
{
	if (!in->gz) {
		ssize_t r;

		if (in->raw_eof)
			return 0;
		r = gp_tr_raw_read(in, (unsigned char *)in->buf + in->end, room);
		if (r < 0)
			return -EIO;
		if (r == 0)
			in->raw_eof = 1;
		in->end += (size_t)r;
		return r;
	}
	if (in->chunks) {
		ssize_t r = gp_tr_chunks_fill(in, room);

		if (r != 0 || in->chunks)
			return r;
		/* serial from here on */
	}
	for (;;) {
		int zr;
		size_t got;

		if (in->st.done)
			return 0;
		if (gp_tr_refill_z(in))
			return -EIO;
		if (in->zs.avail_in == 0 && in->raw_eof) {
			/* the file ended inside the gzip member */
			in->st.gzip_cut = 1;
			return 0;
		}
		in->zs.next_out = (Bytef *)in->buf + in->end;
		in->zs.avail_out = (uInt)room;
		zr = inflate(&in->zs, Z_NO_FLUSH);
		got = room - in->zs.avail_out;
		in->end += got;
		if (zr == Z_STREAM_END) {
			int err = gp_tr_member_end(in);

			if (err)
				return err;
			if (got)
				return (ssize_t)got;
			continue;
		}
		if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) {
			in->st.gzip_damaged = 1;
			in->st.done = 1;
			return got ? (ssize_t)got : 0;
		}
		if (zr == Z_MEM_ERROR)
			return -ENOMEM;
		if (got)
			return (ssize_t)got;
		/* no output: zlib wants more input, read on */
	}
}

int gp_tr_line(struct gp_tr *in, const char **line, size_t *len)
{
	int done;
	const void *rec;

	return gp_tr_next(in, line, len, &done, &rec);
}

int gp_tr_next(struct gp_tr *in, const char **line, size_t *len, int *done, const void **rec)
{
	size_t scan_from;
	int err;

	*done = GP_TR_RAW;
	*rec = NULL;
	if (!in->detected && (err = detect(in)))
		return err;
	if ((err = restore_buffers(in)))
		return err;
	in->direct_line = NULL;
	if (in->chunks && in->start == in->end && gp_tr_chunks_line(in, line, len, done, rec)) {
		in->st.line_no++;
		return 1;
	}
	scan_from = in->start;
	for (;;) {
		char *nl = NULL;

		if (in->end > scan_from)
			nl = memchr(in->buf + scan_from, '\n', in->end - scan_from);
		if (nl) {
			size_t n = (size_t)(nl - (in->buf + in->start));

			*line = in->buf + in->start;
			if (n > 0 && (*line)[n - 1] == '\r')
				n--;
			*len = n;
			in->start = (size_t)(nl - in->buf) + 1;
			in->st.line_no++;
			if (n > GP_TR_MAX_LINE)
				return -EFBIG;
			return 1;
		}
		if (in->st.done) {
			if (in->end > in->start) {
				*line = in->buf + in->start;
				*len = in->end - in->start;
				in->start = in->end;
				in->st.line_no++;
				in->st.last_unterminated = 1;
				return *len > GP_TR_MAX_LINE ? -EFBIG : 1;
			}
			return 0;
		}
		/* make room: drop consumed bytes, grow if one line fills it */
		if (in->start > 0) {
			memmove(in->buf, in->buf + in->start, in->end - in->start);
			in->buf_off += in->start;
			in->end -= in->start;
			in->start = 0;
		}
		scan_from = in->end;
		if (in->cap - in->end < DCHUNK / 4) {
			size_t cap = in->cap * 2;
			char *b;

			if (in->end > GP_TR_MAX_LINE + 2)
				return -EFBIG;
			b = realloc(in->buf, cap);
			if (!b)
				return -ENOMEM;
			in->buf = b;
			in->cap = cap;
		}
		{
			ssize_t r = fill(in, in->cap - in->end);

			if (r < 0)
				return (int)r;
			if (r == 0)
				in->st.done = 1;
		}
	}
}
