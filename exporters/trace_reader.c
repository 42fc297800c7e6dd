/* Trace bytes to lines, see trace_reader.h. */
#include "trace_reader.h"
#include "trace_reader_int.h"
#include "trace_scan.h"

#include "in_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZCHUNK (256u << 10)
#define DCHUNK (1u << 20)

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
	env = getenv("GPUPROF_MAX_OPEN_INPUTS");
	if (env && atoi(env) > 0 && (size_t)atoi(env) < max)
		max = (size_t)atoi(env);
	return max;
}

static void unlink_open(struct gp_tr *in)
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

static void link_newest(struct gp_tr *in)
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
	unlink_open(in);
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
static void make_room(void)
{
	while (open_files.n >= gp_tr_max_open() && open_files.oldest)
		suspend(open_files.oldest);
}

/* in's descriptor again (the same file), at its place. 0 or -errno. */
static int resume(struct gp_tr *in)
{
	struct stat st;
	int fd;

	make_room();
	fd = gp_in_open(in->path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0 || st.st_dev != in->dev || st.st_ino != in->ino ||
	    lseek(fd, in->pos, SEEK_SET) != in->pos) {
		close(fd);
		return -ESTALE; /* replaced while it was being read */
	}
	in->fd = fd;
	link_newest(in);
	return 0;
}

/* Buffers that suspend() gave back, before reading on. */
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
	const char *env = getenv("GPUPROF_THREADS");
	long n = env && atoi(env) > 0 ? atoi(env) : sysconf(_SC_NPROCESSORS_ONLN);

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
	make_room();
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
	link_newest(in);
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
	in->threads = threads ? threads : 1;
}

void gp_tr_set_scan(struct gp_tr *in, int scan)
{
	in->scan = scan;
}

int gp_tr_scanned(struct gp_tr *in, const char *p, size_t n, struct an_line *out)
{
	if (!in->chunks || !out->skip_ignored || p < in->buf || p > in->buf + in->end)
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
		unlink_open(in);
	}
	gp_tr_chunks_free(in);
	if (in->z_ready)
		inflateEnd(&in->zs);
	free(in->zbuf);
	free(in->buf);
	free(in->path);
	free(in);
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
		unlink_open(in);
		link_newest(in);
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
		/* the first member on workers, where there are any */
		if (hdr && in->threads > 1) {
			int err = gp_tr_chunks_start(in, in->zbuf + hdr, (size_t)r - hdr);

			if (err)
				return err;
			if (in->chunks)
				return 0;
		}
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

/* More compressed input when zlib has used what it had. 0, or -EIO. */
static int refill_z(struct gp_tr *in)
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

			if (refill_z(in))
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
	if (refill_z(in))
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
		if (refill_z(in))
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
	size_t scan_from;
	int err;

	if (!in->detected && (err = detect(in)))
		return err;
	if ((err = restore_buffers(in)))
		return err;
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
