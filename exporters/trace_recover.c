/* Repair of cut-short and damaged traces (see trace_recover.h).
 *
 * A first pass only inflates, to learn whether the gzip stream is whole and
 * passes its check. Then one streaming pass: inflate in chunks, cut the
 * output into lines, keep each line that is a whole, valid event and copy
 * it to a new gzip member; a line that is not one is passed over, counted,
 * and copying goes on with the next. Where the first pass could not vouch
 * for the stream, decoded bytes are held a flush chunk at a time (at most
 * CHUNK_HOLD_MAX) and a chunk is kept only whole and sound. Memory stays
 * bounded: that chunk, at most one partial line (capped at GP_TW_MAX_LINE)
 * and the last "final-looking" line are held.
 *
 * Nothing is created until the stream has shown it is a gpuprof trace ("["
 * then a gpuprof.meta event), so rejected input leaves no output behind. */
#include "trace_recover.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "gz_sink.h"
#include "json_buf.h"
#include "in_file.h"
#include "json_check.h"
#include "out_file.h"
#include "trace_format.h"
#include "trace_writer.h"

#define IN_CHUNK (64u * 1024u)
#define OUT_CHUNK (256u * 1024u)
/* A flush chunk's decoded bytes are held until the chunk has decoded whole;
 * one longer than this (the recorder flushes at least once a second) is
 * passed on as it goes, so that memory stays bounded. */
#define CHUNK_HOLD_MAX (64u << 20)
#define OUT_GZ_LEVEL 6

enum rstate {
	R_HEADER,      /* expecting the "[" line */
	R_META,        /* expecting the gpuprof.meta event */
	R_EVENTS,      /* copying "{...}," lines */
	R_AFTER_FINAL, /* saw "{...}" without comma: "]" should follow */
	R_CLOSED,      /* saw "]": only the end of the stream should follow */
};

struct rec {
	enum rstate st;
	const char *out_path;  /* borrowed from the caller */
	mode_t mode;
	int force;             /* out_path may be replaced */
	struct gp_out_file *out; /* the caller's: its temporary file, once created */
	int out_err;           /* an error came from the output */
	struct gp_gz_sink *gz; /* owned once created */
	struct gp_buf carry;   /* a line spanning inflate chunks */
	struct gp_buf pending; /* final-looking line, until we see what follows */
	int skipping;          /* passing over a damaged line up to its newline */
	int full_flush;        /* the meta says gz_flush "full" (GP_GZ_FLUSH_KIND) */
	int resynced;          /* inflate went on past damaged compressed data, or a
				* damaged chunk was dropped: damage was found */
	char pid[24];          /* from the meta event, validated integer text */
	char ts[40];           /* of the last kept line, validated number text */
	uint64_t kept;         /* event lines copied */
	uint64_t skipped_lines, skipped_bytes; /* damaged lines passed over */
	uint64_t damage_after; /* events kept before the first damage */
	int damage_seen;
	uint64_t gzip_gaps, gzip_bytes_skipped;
	int gzip_lost_tail;
	struct gp_buf chunk;   /* decoded bytes of the flush chunk being inflated */
	int strict;            /* the stream is not whole and checked: a chunk with a
				* bad line is dropped whole (chunk_commit) */
	uint64_t chunks_dropped, chunk_bytes_dropped;
	int dry;               /* only find what a repair would do: no output */
};

/* Copies the raw value of top-level `key` into dst if it is a JSON number
 * (integer_only: no fraction or exponent) that fits; 1 if copied. */
static int copy_number(const char *obj, size_t n, const char *key, int integer_only,
		       char *dst, size_t dst_size)
{
	const char *v;
	size_t vn;

	if (!gp_json_top_member(obj, n, key, &v, &vn) || vn == 0 || vn >= dst_size)
		return 0;
	/* The object passed validation, so a value starting like a number is
	 * a well-formed number. */
	if (v[0] != '-' && (v[0] < '0' || v[0] > '9'))
		return 0;
	if (integer_only && (memchr(v, '.', vn) || memchr(v, 'e', vn) || memchr(v, 'E', vn)))
		return 0;
	memcpy(dst, v, vn);
	dst[vn] = '\0';
	return 1;
}

/* The raw value of top-level `key` is the string `want` (unescaped). */
static int member_is(const char *obj, size_t n, const char *key, const char *want)
{
	size_t len = strlen(want);
	const char *v;
	size_t vn;

	return gp_json_top_member(obj, n, key, &v, &vn) && vn == len + 2 && v[0] == '"' &&
	       memcmp(v + 1, want, len) == 0 && v[vn - 1] == '"';
}

/* The event's name is `name` (quoted, unescaped names only). */
static int name_is(const char *obj, size_t n, const char *name)
{
	return member_is(obj, n, GP_T_NAME, name);
}

/* An event line is a valid object starting and ending at the line's edges,
 * followed by "," except for the final one. Returns the object's length, or
 * 0 if the line is not an event line. */
static size_t event_obj(const char *s, size_t len, int *comma)
{
	size_t n = len;

	*comma = n > 0 && s[n - 1] == ',';
	if (*comma)
		n--;
	if (n < 2 || s[0] != '{' || s[n - 1] != '}' || !gp_json_is_object(s, n))
		return 0;
	return n;
}

static int out_write(struct rec *r, const void *p, size_t n)
{
	int rc = r->dry ? 0 : gp_gz_write(r->gz, p, n);

	if (rc)
		r->out_err = 1;
	return rc;
}

/* The output's temporary file (out_file.h), renamed over out_path by the
 * caller once the repair is whole. */
static int create_output(struct rec *r)
{
	char err[256];
	int rc;

	if (r->dry)
		return 0;
	rc = gp_out_open(r->out, r->out_path, r->force, r->mode, err, sizeof(err));
	if (rc) {
		r->out_err = 1;
		return rc;
	}
	rc = gp_gz_open_fd(&r->gz, gp_out_take_fd(r->out), OUT_GZ_LEVEL); /* fd handed over */
	if (rc)
		r->out_err = 1;
	return rc;
}

/* Copies a "{...}," line. obj_len is the object without the comma. */
static int keep_line(struct rec *r, const char *s, size_t len, size_t obj_len)
{
	int rc = out_write(r, s, len);

	if (!rc)
		rc = out_write(r, "\n", 1);
	if (rc)
		return rc;
	r->kept++;
	if (!copy_number(s, obj_len, GP_T_TS, 0, r->ts, sizeof(r->ts)))
		strcpy(r->ts, "0");
	return 0;
}

static int set_pending(struct rec *r, const char *s, size_t len)
{
	gp_buf_reset(&r->pending);
	gp_buf_append(&r->pending, s, len);
	if (r->pending.failed)
		return r->pending.failed;
	r->st = R_AFTER_FINAL;
	return 0;
}

/* The final-looking line turned out not to end the trace: it is an ordinary
 * event, so it gets its comma. */
static int keep_pending(struct rec *r)
{
	struct gp_buf *p = &r->pending;
	int rc;

	if (p->len == 0)
		return 0;
	rc = out_write(r, p->data, p->len);
	if (!rc)
		rc = out_write(r, ",\n", 2);
	if (rc)
		return rc;
	r->kept++;
	if (!copy_number(p->data, p->len, GP_T_TS, 0, r->ts, sizeof(r->ts)))
		strcpy(r->ts, "0");
	gp_buf_reset(p);
	return 0;
}

static void note_damage(struct rec *r)
{
	if (!r->damage_seen) {
		r->damage_seen = 1;
		r->damage_after = r->kept;
	}
}

/* A line that is no event (bytes, its newline included) is passed over; a
 * final-looking line before it was an ordinary event after all. */
static int damaged_line(struct rec *r, uint64_t bytes)
{
	int rc = 0;

	if (r->st == R_AFTER_FINAL) {
		rc = keep_pending(r);
		r->st = R_EVENTS;
	}
	note_damage(r);
	r->skipped_lines++;
	r->skipped_bytes += bytes;
	return rc;
}

static int line(struct rec *r, const char *s, size_t len)
{
	size_t n;
	int comma, rc;

	switch (r->st) {
	case R_HEADER:
		if (len != 1 || s[0] != '[')
			return -EINVAL;
		r->st = R_META;
		return 0;
	case R_META:
		n = event_obj(s, len, &comma);
		if (!n || !name_is(s, n, GP_EV_META))
			return -EINVAL;
		if (!copy_number(s, n, GP_T_PID, 1, r->pid, sizeof(r->pid)))
			strcpy(r->pid, "0");
		{
			const char *args;
			size_t an;

			r->full_flush = gp_json_top_member(s, n, GP_T_ARGS, &args, &an) &&
					member_is(args, an, GP_F_GZ_FLUSH, GP_GZ_FLUSH_KIND);
		}
		rc = create_output(r);
		if (!rc)
			rc = out_write(r, "[\n", 2);
		if (rc)
			return rc;
		r->st = R_EVENTS;
		return comma ? keep_line(r, s, len, n) : set_pending(r, s, len);
	case R_EVENTS:
		n = event_obj(s, len, &comma);
		if (!n)
			return damaged_line(r, len + 1);
		return comma ? keep_line(r, s, len, n) : set_pending(r, s, len);
	case R_AFTER_FINAL:
		if (len == 1 && s[0] == ']') {
			r->st = R_CLOSED;
			return 0;
		}
		/* more events: the final-looking one was not final */
		rc = keep_pending(r);
		if (rc)
			return rc;
		r->st = R_EVENTS;
		return line(r, s, len);
	case R_CLOSED:
		/* after the array: nothing of the trace */
		return damaged_line(r, len + 1);
	}
	return 0;
}

/* Splits decompressed data into lines; a line cut by the chunk boundary
 * waits in carry. */
static int feed(struct rec *r, const char *data, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t seg = nl ? (size_t)(nl - data) : n;
		int rc;

		if (r->skipping) {
			r->skipped_bytes += nl ? seg + 1 : seg;
			if (!nl)
				return 0;
			r->skipping = 0;
			data += seg + 1;
			n -= seg + 1;
			continue;
		}
		/* Reject non-traces at once instead of buffering a long line. */
		if (r->st == R_HEADER && r->carry.len + seg > 1)
			return -EINVAL;
		if (r->carry.len + seg >= GP_TW_MAX_LINE) {
			/* longer than the writer makes: damage, or not our file */
			if (r->st == R_HEADER || r->st == R_META)
				return -EINVAL;
			rc = damaged_line(r, r->carry.len);
			gp_buf_reset(&r->carry);
			if (rc)
				return rc;
			r->skipping = 1; /* its bytes from here to its newline */
			continue;
		}
		if (!nl) {
			gp_buf_append(&r->carry, data, seg);
			return r->carry.failed;
		}
		if (r->carry.len) {
			gp_buf_append(&r->carry, data, seg);
			if (r->carry.failed)
				return r->carry.failed;
			rc = line(r, r->carry.data, r->carry.len);
			gp_buf_reset(&r->carry);
		} else {
			rc = line(r, data, seg);
		}
		if (rc)
			return rc;
		data += seg + 1;
		n -= seg + 1;
	}
	return 0;
}

/* `"key":` in args, after a comma unless first. */
static void arg_key(struct gp_buf *b, const char *key, int comma)
{
	if (comma)
		gp_buf_putc(b, ',');
	gp_buf_json_cstr(b, key);
	gp_buf_putc(b, ':');
}

/* What was passed over, as args members (after a comma unless first); none
 * where nothing was. */
static void damage_args(struct gp_buf *b, const struct gp_recover_result *res, int comma)
{
	if (!gp_recover_damaged(res))
		return;
	arg_key(b, GP_F_LINES_SKIPPED, comma);
	gp_buf_u64(b, res->lines_skipped);
	arg_key(b, GP_F_BYTES_SKIPPED, 1);
	gp_buf_u64(b, res->bytes_skipped);
	arg_key(b, GP_F_GZIP_GAPS, 1);
	gp_buf_u64(b, res->gzip_gaps);
	arg_key(b, GP_F_DAMAGE_AFTER, 1);
	gp_buf_u64(b, res->damage_after);
}

/* A new gpuprof.end: the program's own never came. */
static int write_end(struct rec *r, struct gp_recover_result *res)
{
	char head[160];
	struct gp_buf b;
	int n, rc;

	n = gp_tw_end_head(head, sizeof(head), r->pid, r->ts);
	if (n < 0 || (size_t)n >= sizeof(head))
		return -EOVERFLOW;
	gp_buf_init(&b, 0);
	gp_buf_append(&b, head, (size_t)n);
	arg_key(&b, GP_F_CLEAN, 0);
	gp_buf_puts(&b, "false");
	arg_key(&b, GP_F_RECOVERED, 1);
	gp_buf_puts(&b, "true");
	arg_key(&b, GP_F_EVENTS_KEPT, 1);
	gp_buf_u64(&b, res->events_kept);
	arg_key(&b, GP_F_BYTES_DROPPED, 1);
	gp_buf_u64(&b, res->bytes_dropped);
	damage_args(&b, res, 1);
	gp_buf_puts(&b, "}}\n]\n");
	rc = b.failed ? b.failed : out_write(r, b.data, b.len);
	gp_buf_free(&b);
	return rc;
}

/* The trace's own gpuprof.end, with what was passed over put first in its
 * args (args_at, args_len: its args object; NULL: it has none, and gets
 * one). A trace repaired twice names the later repair's damage first. */
static int write_own_end(struct rec *r, const struct gp_recover_result *res, const char *args_at,
			 size_t args_len)
{
	const char *s = r->pending.data;
	size_t n = r->pending.len;
	struct gp_buf b;
	int rc;

	gp_buf_init(&b, 0);
	if (!gp_recover_damaged(res)) {
		gp_buf_append(&b, s, n);
	} else if (args_at) {
		size_t head = (size_t)(args_at - s) + 1; /* through the args' "{" */

		gp_buf_append(&b, s, head);
		damage_args(&b, res, 0);
		if (args_len > 2)
			gp_buf_putc(&b, ',');
		gp_buf_append(&b, s + head, n - head);
	} else {
		gp_buf_append(&b, s, n - 1); /* up to its closing "}" */
		gp_buf_putc(&b, ',');
		gp_buf_json_cstr(&b, GP_T_ARGS);
		gp_buf_puts(&b, ":{");
		damage_args(&b, res, 0);
		gp_buf_puts(&b, "}}");
	}
	gp_buf_puts(&b, "\n]\n");
	rc = b.failed ? b.failed : out_write(r, b.data, b.len);
	gp_buf_free(&b);
	return rc;
}

/* End of the decompressed stream: close the array with the trace's own
 * gpuprof.end where it came, else with a new one. */
static int finish(struct rec *r, struct gp_recover_result *res)
{
	const char *args = NULL;
	size_t args_len = 0;
	uint64_t tail = 0;
	int rc, own_end;

	if (r->carry.len) {
		/* "]" cut before its newline still closes the array. */
		if (r->st == R_AFTER_FINAL && r->carry.len == 1 && r->carry.data[0] == ']') {
			r->st = R_CLOSED;
		} else if (r->st == R_CLOSED) {
			rc = damaged_line(r, r->carry.len); /* after the array */
			if (rc)
				return rc;
		} else if (!r->skipping) {
			tail = r->carry.len; /* an incomplete last line */
		}
	}
	if (r->st == R_HEADER || r->st == R_META)
		return -EINVAL;
	res->lines_skipped = r->skipped_lines;
	res->bytes_skipped = r->skipped_bytes;
	res->damage_after = r->damage_after;
	res->gzip_gaps = r->gzip_gaps;
	res->gzip_bytes_skipped = r->gzip_bytes_skipped;
	res->gzip_lost_tail = r->gzip_lost_tail;
	res->chunks_dropped = r->chunks_dropped;
	res->chunk_bytes_dropped = r->chunk_bytes_dropped;
	res->bytes_dropped = tail;
	/* the program's own end, only "]" or nothing after it */
	own_end = (r->st == R_CLOSED || r->st == R_AFTER_FINAL) &&
		  name_is(r->pending.data, r->pending.len, GP_EV_END);
	if (own_end && gp_json_top_member(r->pending.data, r->pending.len, GP_T_ARGS, &args, &args_len) &&
	    (args_len < 2 || args[0] != '{'))
		own_end = 0; /* args that are no object: not the writer's end */
	if (own_end) {
		rc = write_own_end(r, res, args, args_len);
		if (rc)
			return rc;
		res->events_kept = r->kept + 1;
		res->already_complete = r->st == R_CLOSED && !tail && !gp_recover_damaged(res);
		return 0;
	}
	rc = keep_pending(r);
	if (rc)
		return rc;
	res->events_kept = r->kept;
	return write_end(r, res);
}

static ssize_t read_some(int fd, void *buf, size_t n)
{
	for (;;) {
		ssize_t got = read(fd, buf, n);

		if (got >= 0 || errno != EINTR)
			return got < 0 ? -errno : got;
	}
}

/* A line a trace holds: an event ("{...}," or the last one's "{...}"),
 * or the array's closing "]". */
static int line_ok(const char *s, size_t n)
{
	int comma;

	return (n == 1 && s[0] == ']') || event_obj(s, n, &comma) != 0;
}

/* Whether every line the chunk completes is one a trace holds: damage that
 * still decodes shows as a bad line, and then no line of its chunk can be
 * trusted. The line begun before the chunk is checked whole. */
static int chunk_lines_ok(struct rec *r)
{
	const char *p = r->chunk.data, *end = p + r->chunk.len, *nl;
	int ok = 1;

	if (r->st < R_EVENTS || r->skipping || !(nl = memchr(p, '\n', r->chunk.len)))
		return 1;
	if (r->carry.len) {
		struct gp_buf first;

		gp_buf_init(&first, 0);
		gp_buf_append(&first, r->carry.data, r->carry.len);
		gp_buf_append(&first, p, (size_t)(nl - p));
		ok = !first.failed && line_ok(first.data, first.len);
		gp_buf_free(&first);
	} else {
		ok = line_ok(p, (size_t)(nl - p));
	}
	for (p = nl + 1; ok && p < end && (nl = memchr(p, '\n', (size_t)(end - p))); p = nl + 1)
		ok = line_ok(p, (size_t)(nl - p));
	return ok;
}

static void chunk_drop(struct rec *r);

/* The chunk decoded whole (or its stream ended): its lines go on, unless
 * one of them shows it was damaged. */
static int chunk_commit(struct rec *r)
{
	int rc = 0;

	if (!r->chunk.len)
		return 0;
	if (r->strict && !chunk_lines_ok(r)) {
		chunk_drop(r);
		/* the line begun before it ends in it: damaged too */
		if (r->carry.len)
			rc = damaged_line(r, r->carry.len);
		gp_buf_reset(&r->carry);
		r->resynced = 1; /* damage found: it accounts for a failed check */
		return rc;
	}
	rc = feed(r, r->chunk.data, r->chunk.len);
	gp_buf_reset(&r->chunk);
	return rc;
}

/* The chunk failed to decode: what had decoded of it is passed over, its
 * lines counted as damaged (a line begun before it is resync's). */
static void chunk_drop(struct rec *r)
{
	uint64_t lines = 0;

	if (!r->chunk.len && r->st < R_EVENTS)
		return;
	for (size_t i = 0; i < r->chunk.len; i++)
		lines += r->chunk.data[i] == '\n';
	r->chunks_dropped++;
	r->chunk_bytes_dropped += r->chunk.len;
	if (lines) {
		note_damage(r);
		r->skipped_lines += lines;
		r->skipped_bytes += r->chunk.len;
	}
	gp_buf_reset(&r->chunk);
}

/* Decoded bytes: held with their chunk until it has decoded whole. */
static int chunk_add(struct rec *r, const char *data, size_t n)
{
	/* the header and meta are checked at once, line by line: not a
	 * trace, no output */
	while (r->st < R_EVENTS && n) {
		const char *nl = memchr(data, '\n', n);
		size_t k = nl ? (size_t)(nl - data) + 1 : n;
		int rc = feed(r, data, k);

		if (rc)
			return rc;
		data += k;
		n -= k;
	}
	if (r->chunk.len + n > CHUNK_HOLD_MAX) {
		int rc = chunk_commit(r);

		return rc ? rc : feed(r, data, n);
	}
	gp_buf_append(&r->chunk, data, n);
	return r->chunk.failed;
}

/* Where the next full flush's marker (an empty stored block: 00 00 ff ff)
 * may end in p[0..n): just past it, or p + n when there is none. */
static Bytef *marker_end(Bytef *p, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 0xff && p[i + 3] == 0xff)
			return p + i + 4;
	return p + n;
}

/* Compressed data that did not decode: on to the next full flush point
 * (where the writer restarted its compression, GP_GZ_FLUSH_KIND), the line
 * it cut passed over as damaged. 1 when found, 0 when the input ends first,
 * or -errno. */
static int resync(struct rec *r, z_stream *zs, int fd, unsigned char *inbuf, int *in_eof)
{
	uLong from = zs->total_in;
	int rc = 0;

	if (r->skipping)
		r->skipping = 0; /* that line was counted already */
	else if (r->carry.len)
		rc = damaged_line(r, r->carry.len);
	else
		note_damage(r);
	gp_buf_reset(&r->carry);
	if (rc)
		return rc;
	for (;;) {
		int zr = inflateSync(zs);

		if (zr == Z_OK) {
			r->gzip_gaps++;
			r->gzip_bytes_skipped += zs->total_in - from;
			r->resynced = 1;
			return 1;
		}
		if (zr != Z_BUF_ERROR && zr != Z_DATA_ERROR)
			return 0;
		if (zs->avail_in == 0 && !*in_eof) {
			ssize_t n = read_some(fd, inbuf, IN_CHUNK);

			if (n < 0)
				return (int)n;
			*in_eof = n == 0;
			zs->next_in = inbuf;
			zs->avail_in = (uInt)n;
			continue;
		}
		if (zs->avail_in == 0)
			return 0;
	}
}

/* Whether fd's gzip stream decodes whole and passes its check (CRC-32 and
 * length): then every line in it is as the writer wrote it, and a bad one
 * is the writer's or a hand's, passed over alone. *alone: nothing follows
 * the member in the file. fd is read to its end. */
static int stream_intact(int fd, unsigned char *inbuf, unsigned char *obuf, int *alone)
{
	z_stream zs = { 0 };
	int zr = Z_OK;

	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return 0;
	while (zr == Z_OK || zr == Z_BUF_ERROR) {
		if (zs.avail_in == 0) {
			ssize_t n = read_some(fd, inbuf, IN_CHUNK);

			if (n <= 0)
				break;
			zs.next_in = inbuf;
			zs.avail_in = (uInt)n;
		}
		zs.next_out = obuf;
		zs.avail_out = OUT_CHUNK;
		zr = inflate(&zs, Z_NO_FLUSH);
	}
	*alone = zr == Z_STREAM_END && zs.avail_in == 0 && read_some(fd, inbuf, 1) == 0;
	inflateEnd(&zs);
	return zr == Z_STREAM_END;
}

/* The gzip trailer's checks failed: everything before them decoded (past a
 * resync they cover data that was not). The stream has ended, not cleanly. */
static int trailer_check_failed(const z_stream *zs)
{
	return zs->msg && (strcmp(zs->msg, "incorrect data check") == 0 ||
			   strcmp(zs->msg, "incorrect length check") == 0);
}

/* The repair of in_path into o's temporary file for out_path, closed but
 * not yet renamed (the caller's gp_out_commit or gp_out_abandon). dry: no
 * output, only res; then 1 where the stream is not whole and checked, or
 * something follows it in the file (the trace is no copy's to keep).
 * *strict: whether the stream is not whole and checked; -1: not known yet,
 * then found out (a pass over the file) and set. */
static int repair(const char *in_path, struct gp_out_file *o, const char *out_path, int force,
		  mode_t mode, int dry, int *strict, struct gp_recover_result *res)
{
	struct rec r = { .out_path = out_path, .mode = mode, .force = force, .out = o, .dry = dry };
	unsigned char *inbuf = NULL, *obuf = NULL;
	z_stream zs = { 0 };
	Bytef *in_end = NULL, *stop = NULL; /* the input read; where inflate stops */
	int in_eof = 0, stream_end = 0, alone = 0;
	int fd, rc, zr;

	memset(res, 0, sizeof(*res));
	strcpy(r.pid, "0");
	strcpy(r.ts, "0");
	gp_buf_init(&r.carry, 0);   /* capped by feed() */
	gp_buf_init(&r.pending, 0); /* a line that passed feed()'s cap */
	gp_buf_init(&r.chunk, 0);   /* capped by chunk_add() */
	fd = gp_in_open(in_path); /* a regular file only */
	if (fd < 0)
		return fd;
	inbuf = malloc(IN_CHUNK);
	obuf = malloc(OUT_CHUNK);
	if (!inbuf || !obuf) {
		rc = -ENOMEM;
		goto out_free;
	}
	/* whole and checked, or each chunk must show itself sound (known
	 * from the dry pass, where there was one) */
	if (*strict < 0) {
		*strict = !stream_intact(fd, inbuf, obuf, &alone);
		if (dry && (*strict || !alone)) {
			rc = 1;
			goto out_free;
		}
		if (lseek(fd, 0, SEEK_SET) != 0) {
			rc = -errno;
			goto out_free;
		}
	}
	r.strict = *strict;
	/* 16 + MAX_WBITS: gzip only; a zlib or raw stream is not a trace. */
	zr = inflateInit2(&zs, 16 + MAX_WBITS);
	if (zr != Z_OK) {
		rc = zr == Z_MEM_ERROR ? -ENOMEM : -EIO;
		goto out_free;
	}
	for (;;) {
		size_t got;
		int at_marker;

		if (zs.avail_in == 0 && in_end == zs.next_in && !in_eof) {
			ssize_t n = read_some(fd, inbuf, IN_CHUNK);

			if (n < 0) {
				rc = (int)n;
				goto out_inflate;
			}
			in_eof = n == 0;
			zs.next_in = inbuf;
			zs.avail_in = (uInt)n;
			in_end = inbuf + n;
			stop = NULL;
		}
		/* inflate stops just past a possible flush marker: there, at a
		 * block's end, the chunk before it has decoded whole (a marker
		 * cut by a read is missed: two chunks count as one) */
		if (!stop)
			stop = marker_end(zs.next_in, (size_t)(in_end - zs.next_in));
		zs.avail_in = (uInt)(stop - zs.next_in);
		zs.next_out = obuf;
		zs.avail_out = OUT_CHUNK;
		zr = inflate(&zs, Z_NO_FLUSH);
		got = OUT_CHUNK - zs.avail_out;
		at_marker = zs.next_in == stop && stop != in_end;
		if (zs.next_in == stop)
			stop = NULL;
		zs.avail_in = (uInt)(in_end - zs.next_in);
		if (got) {
			rc = chunk_add(&r, (const char *)obuf, got);
			if (rc)
				goto out_inflate;
		}
		if (zr == Z_OK && at_marker && (zs.data_type & 128)) {
			rc = chunk_commit(&r);
			if (rc)
				goto out_inflate;
		}
		if (zr == Z_STREAM_END) {
			stream_end = 1;
			break;
		}
		if (zr == Z_OK)
			continue;
		if (zr == Z_BUF_ERROR && zs.next_in != in_end)
			continue; /* stopped at a marker that was none: on */
		if (zr == Z_BUF_ERROR && !in_eof)
			continue; /* needs more input */
		if (zr == Z_MEM_ERROR) {
			rc = -ENOMEM;
			goto out_inflate;
		}
		if (zr == Z_DATA_ERROR && r.st >= R_EVENTS && trailer_check_failed(&zs)) {
			/* everything decoded, and it is not what was written:
			 * where, nothing tells, unless damage was passed over
			 * already (that gap alone fails the check) */
			if (!r.resynced) {
				rc = -EBADMSG;
				goto out_inflate;
			}
			break;
		}
		if (zr == Z_DATA_ERROR && r.st >= R_EVENTS) {
			chunk_drop(&r); /* whatever of it decoded may be altered */
			rc = r.full_flush ? resync(&r, &zs, fd, inbuf, &in_eof) : 0;
			if (rc < 0)
				goto out_inflate;
			in_end = zs.next_in + zs.avail_in;
			stop = NULL;
			if (rc == 1)
				continue;
			r.gzip_lost_tail = 1; /* what followed could not be decoded */
		}
		/* Input ended mid-member (Z_BUF_ERROR), or damage that cannot be
		 * passed over: keep what decoded so far. Data after the first
		 * member is ignored, as a trace is one member. */
		break;
	}
	/* the last chunk: the stream ended, or was cut, after it decoded */
	rc = chunk_commit(&r);
	if (rc)
		goto out_inflate;
	res->gzip_truncated = !stream_end;
	rc = finish(&r, res);

out_inflate:
	inflateEnd(&zs);
out_free:
	free(inbuf);
	free(obuf);
	close(fd);
	gp_buf_free(&r.carry);
	gp_buf_free(&r.pending);
	gp_buf_free(&r.chunk);
	if (!rc && r.gz) {
		rc = gp_gz_close(r.gz); /* trailer, fsync, close */
		r.gz = NULL;
		if (rc)
			r.out_err = 1;
	}
	if (rc) {
		gp_gz_abandon(r.gz);
		gp_out_abandon(o);
		memset(res, 0, sizeof(*res));
		res->output_failed = r.out_err;
	}
	return rc;
}

/* in_path's bytes into o's temporary file for out_path. */
static int copy_whole(const char *in_path, struct gp_out_file *o, const char *out_path, int force,
		      mode_t mode, struct gp_recover_result *res)
{
	char err[256];
	unsigned char *buf = malloc(OUT_CHUNK);
	int fd = gp_in_open(in_path), rc = 0;

	if (!buf || fd < 0) {
		rc = fd < 0 ? fd : -ENOMEM;
		goto out;
	}
	rc = gp_out_open(o, out_path, force, mode, err, sizeof(err));
	if (rc) {
		res->output_failed = 1;
		goto out;
	}
	for (;;) {
		ssize_t n = read_some(fd, buf, OUT_CHUNK);

		if (n <= 0) {
			rc = (int)n;
			break;
		}
		for (ssize_t at = 0; at < n;) {
			ssize_t w = write(o->fd, buf + at, (size_t)(n - at));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = w < 0 ? -errno : -EIO;
				res->output_failed = 1;
				goto out;
			}
			at += w;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* A trace already complete (its gzip stream whole and checked, alone in
 * the file, closed, its own gpuprof.end, nothing passed over) is copied as
 * it is, not decoded and compressed again; in place, it is left alone.
 * Anything else is repaired. */
static int recover(const char *in_path, struct gp_out_file *o, const char *out_path, int force,
		   mode_t mode, int in_place, struct gp_recover_result *res)
{
	int strict = -1;
	int rc = repair(in_path, o, out_path, force, mode, 1, &strict, res);

	if (rc < 0)
		return rc;
	if (rc == 0 && res->already_complete && !res->gzip_truncated) {
		if (in_place)
			return 0;
		rc = copy_whole(in_path, o, out_path, force, mode, res);
		if (rc) {
			int out_failed = res->output_failed;

			gp_out_abandon(o);
			memset(res, 0, sizeof(*res));
			res->output_failed = out_failed;
		}
		return rc;
	}
	return repair(in_path, o, out_path, force, mode, 0, &strict, res);
}

int gp_trace_recover(const char *in_path, const char *out_path, int force,
		     struct gp_recover_result *res)
{
	struct gp_recover_result local;
	struct gp_out_file o = { .fd = -1 };
	char err[256];
	int rc;

	if (!res)
		res = &local;
	o.path = out_path;
	rc = recover(in_path, &o, out_path, force, 0666, 0, res);
	if (!rc && (rc = gp_out_commit(&o, err, sizeof(err)))) {
		memset(res, 0, sizeof(*res));
		res->output_failed = 1;
	}
	gp_out_abandon(&o);
	return rc;
}

/* The damaged original, kept beside the repair as path.orig (or .orig.N): a
 * second name for the same file where the file system allows it, else the
 * file renamed. 0 or -errno. */
static int keep_original(const char *path, char *name, size_t cap)
{
	int rc = -EEXIST;

	for (unsigned i = 0; i < 100 && rc == -EEXIST; i++) {
		int n = i ? snprintf(name, cap, "%s.orig.%u", path, i) : snprintf(name, cap, "%s.orig", path);

		if (n < 0 || (size_t)n >= cap)
			return -ENAMETOOLONG;
		rc = link(path, name) == 0 ? 0 : -errno;
		if (rc == -EPERM || rc == -EOPNOTSUPP || rc == -EMLINK) {
			struct stat st;

			/* no hard links here: rename it, never over another file */
			if (lstat(name, &st) == 0)
				rc = -EEXIST;
			else
				rc = rename(path, name) == 0 ? 0 : -errno;
		}
	}
	if (rc)
		name[0] = '\0';
	return rc;
}

int gp_trace_recover_in_place(const char *path, struct gp_recover_result *res)
{
	struct gp_recover_result local;
	struct gp_out_file o = { .fd = -1 };
	char err[256];
	struct stat st;
	int rc;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	/* Renaming over a symlink would replace the link, not the trace. */
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	o.path = path;
	rc = recover(path, &o, path, 1, st.st_mode & 0666, 1, res);
	if (rc)
		goto out;
	if (res->already_complete && !res->gzip_truncated)
		goto out; /* nothing to repair: leave the original alone */
	if (gp_recover_damaged(res)) {
		rc = keep_original(path, res->original, sizeof(res->original));
		if (rc) {
			memset(res, 0, sizeof(*res));
			res->output_failed = 1;
			goto out;
		}
	}
	rc = gp_out_commit(&o, err, sizeof(err));
	if (rc) {
		memset(res, 0, sizeof(*res));
		res->output_failed = 1;
	}
out:
	gp_out_abandon(&o);
	return rc;
}
