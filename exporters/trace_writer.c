/* Chrome trace JSON writer on top of a gzip sink (see trace_writer.h). */
#include "trace_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gz_ring.h"
#include "gz_sink.h"
#include "json_buf.h"
#include "trace_format.h"

int gp_tw_end_head(char *buf, size_t cap, const char *pid, const char *ts)
{
	return snprintf(buf, cap,
			"{\"%s\":\"%c\",\"%s\":\"%c\",\"%s\":\"%s\",\"%s\":\"%s\",\"%s\":%s,"
			"\"%s\":0,\"%s\":%s,\"%s\":{",
			GP_T_PH, GP_PH_END, GP_T_S, GP_S_END, GP_T_NAME, GP_EV_END, GP_T_CAT,
			GP_CAT_GPUPROF, GP_T_PID, pid, GP_T_TID, GP_T_TS, ts, GP_T_ARGS);
}

/* Written by gp_tw_close() when the caller built no final event, so the file
 * still ends in valid JSON. Built on the stack: it must not fail where
 * the caller's final event failed for want of memory. */
static const char *minimal_end(char *buf, size_t cap)
{
	int n = gp_tw_end_head(buf, cap, "0", "0.000");

	if (n < 0 || (size_t)n + 3 > cap)
		return "";
	memcpy(buf + n, "}}", 3);
	return buf;
}

enum ev_state {
	EV_NONE, /* no event under construction */
	EV_TOP,  /* top-level fields may follow */
	EV_ARGS, /* inside "args":{ */
};

struct gp_trace_writer {
	struct gp_gz_sink *gz; /* owned; NULL when writing into ring */
	struct gp_gz_ring *ring; /* borrowed */
	gp_tw_tap_fn tap;
	void *tap_ctx;
	struct gp_tw_event ev; /* what the tap is told, while tap is set */
	struct gp_buf line;    /* the event under construction */
	enum ev_state state;
	int nargs;             /* args written so far: comma placement */
	int ev_err;            /* misuse of the event under construction */
	int err;               /* first error over the writer's life */
	int stopped;           /* gp_tw_fail's error: nothing more is written */
	uint64_t events;
	uint64_t flushes;
	uint64_t diverted_in, diverted_out; /* what the file took before gp_tw_divert */
};

static int tw_fail(struct gp_trace_writer *tw, int err)
{
	if (!tw->err)
		tw->err = err;
	return err;
}

int gp_tw_open_fd(struct gp_trace_writer **out, int fd, int gz_level)
{
	struct gp_trace_writer *tw;
	int r;

	*out = NULL;
	tw = calloc(1, sizeof(*tw));
	if (!tw) {
		/* fd is ours whatever happens, as for gp_gz_open_fd(). */
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	r = gp_gz_open_fd(&tw->gz, fd, gz_level); /* fd handed over, even on failure */
	if (r)
		goto fail;
	/* Recovery refuses longer lines, so the writer must never produce one. */
	gp_buf_init(&tw->line, GP_TW_MAX_LINE);
	r = gp_gz_write(tw->gz, "[\n", 2);
	if (r)
		goto fail_gz;
	*out = tw;
	return 0;

fail_gz:
	gp_gz_abandon(tw->gz);
fail:
	free(tw);
	return r;
}

int gp_tw_open_ring(struct gp_trace_writer **out, struct gp_gz_ring *ring)
{
	struct gp_trace_writer *tw;

	*out = NULL;
	if (!ring)
		return -EINVAL;
	tw = calloc(1, sizeof(*tw));
	if (!tw)
		return -ENOMEM;
	tw->ring = ring;
	gp_buf_init(&tw->line, GP_TW_MAX_LINE);
	*out = tw;
	return 0;
}

int gp_tw_divert(struct gp_trace_writer *tw, struct gp_gz_ring *ring, struct gp_gz_sink **file)
{
	int r;

	*file = NULL;
	if (!tw->gz || !ring || tw->state != EV_NONE)
		return -EINVAL;
	if ((r = gp_gz_flush(tw->gz)))
		return tw_fail(tw, r);
	tw->diverted_in = gp_gz_bytes_in(tw->gz);
	tw->diverted_out = gp_gz_bytes_out(tw->gz);
	*file = tw->gz;
	tw->gz = NULL;
	tw->ring = ring;
	return 0;
}

void gp_tw_fail(struct gp_trace_writer *tw, int err)
{
	tw_fail(tw, err);
	if (!tw->stopped)
		tw->stopped = err;
}

void gp_tw_set_tap(struct gp_trace_writer *tw, gp_tw_tap_fn fn, void *ctx)
{
	tw->tap = fn;
	tw->tap_ctx = ctx;
}

static int sink_write(struct gp_trace_writer *tw, const void *p, size_t n)
{
	return tw->ring ? gp_gz_ring_write(tw->ring, p, n) : gp_gz_write(tw->gz, p, n);
}

int gp_tw_write_line(struct gp_trace_writer *tw, const char *line, size_t len)
{
	int r;

	if (tw->err)
		return tw->err;
	r = sink_write(tw, line, len);
	if (!r)
		r = sink_write(tw, ",\n", 2);
	if (r)
		return tw_fail(tw, r);
	tw->events++;
	return 0;
}

void gp_tw_begin_n(struct gp_trace_writer *tw, char ph, const char *name, size_t n,
		   const char *cat, int64_t pid, int64_t tid, int64_t ts_ns)
{
	struct gp_buf *b = &tw->line;

	if (tw->tap) {
		memset(&tw->ev, 0, sizeof(tw->ev));
		tw->ev.ph = ph;
		tw->ev.name = name;
		tw->ev.name_len = n;
		tw->ev.cat = cat;
		tw->ev.pid = pid;
		tw->ev.tid = tid;
		tw->ev.ts_ns = ts_ns;
	}

	/* An unfinished previous event is dropped: begin always starts fresh. */
	gp_buf_reset(b);
	tw->state = EV_TOP;
	tw->nargs = 0;
	tw->ev_err = 0;
	gp_buf_puts(b, "{\"ph\":");
	gp_buf_json_str(b, &ph, 1);
	gp_buf_puts(b, ",\"name\":");
	gp_buf_json_str(b, name, n);
	gp_buf_puts(b, ",\"cat\":");
	gp_buf_json_cstr(b, cat);
	gp_buf_puts(b, ",\"pid\":");
	gp_buf_i64(b, pid);
	gp_buf_puts(b, ",\"tid\":");
	gp_buf_i64(b, tid);
	gp_buf_puts(b, ",\"ts\":");
	gp_buf_ns_as_us(b, ts_ns);
}

void gp_tw_begin(struct gp_trace_writer *tw, char ph, const char *name,
		 const char *cat, int64_t pid, int64_t tid, int64_t ts_ns)
{
	gp_tw_begin_n(tw, ph, name, name ? strlen(name) : 0, cat, pid, tid, ts_ns);
}

/* Starts `,"key":` at the top level. Top-level fields after args would land
 * inside the args object, so that is flagged and the event dropped at end. */
static int top_key(struct gp_trace_writer *tw, const char *key)
{
	if (tw->state != EV_TOP) {
		if (!tw->ev_err)
			tw->ev_err = -EINVAL;
		return -1;
	}
	gp_buf_putc(&tw->line, ',');
	gp_buf_json_cstr(&tw->line, key);
	gp_buf_putc(&tw->line, ':');
	return 0;
}

void gp_tw_dur(struct gp_trace_writer *tw, int64_t dur_ns)
{
	if (top_key(tw, "dur") == 0)
		gp_buf_ns_as_us(&tw->line, dur_ns);
}

void gp_tw_field_str(struct gp_trace_writer *tw, const char *key, const char *v)
{
	if (top_key(tw, key) == 0)
		gp_buf_json_cstr(&tw->line, v);
}

void gp_tw_field_u64(struct gp_trace_writer *tw, const char *key, uint64_t v)
{
	if (top_key(tw, key) != 0)
		return;
	gp_buf_u64(&tw->line, v);
	if (tw->tap && !strcmp(key, GP_T_ID)) {
		tw->ev.id = v;
		tw->ev.has_id = 1;
	}
}

void gp_tw_field_hex(struct gp_trace_writer *tw, const char *key, uint64_t v)
{
	if (top_key(tw, key) == 0)
		gp_buf_hex_str(&tw->line, v);
}

void gp_tw_args_begin(struct gp_trace_writer *tw)
{
	if (tw->state == EV_ARGS)
		return;
	if (tw->state != EV_TOP) {
		if (!tw->ev_err)
			tw->ev_err = -EINVAL;
		return;
	}
	gp_buf_puts(&tw->line, ",\"args\":{");
	tw->state = EV_ARGS;
	tw->nargs = 0;
}

/* Starts `"key":` inside args, opening args if the caller did not. */
static int arg_key(struct gp_trace_writer *tw, const char *key)
{
	gp_tw_args_begin(tw);
	if (tw->state != EV_ARGS)
		return -1;
	if (tw->nargs++)
		gp_buf_putc(&tw->line, ',');
	gp_buf_json_cstr(&tw->line, key);
	gp_buf_putc(&tw->line, ':');
	return 0;
}

void gp_tw_arg_str(struct gp_trace_writer *tw, const char *key, const char *v)
{
	if (arg_key(tw, key) != 0)
		return;
	gp_buf_json_cstr(&tw->line, v);
	if (tw->tap && !strcmp(key, GP_F_KIND))
		tw->ev.kind_device = !strcmp(v, GP_KIND_DEVICE);
}

void gp_tw_arg_str_n(struct gp_trace_writer *tw, const char *key, const char *v, size_t n)
{
	if (arg_key(tw, key) == 0)
		gp_buf_json_str(&tw->line, v, n);
}

void gp_tw_arg_u64(struct gp_trace_writer *tw, const char *key, uint64_t v)
{
	if (arg_key(tw, key) != 0)
		return;
	gp_buf_u64(&tw->line, v);
	if (!tw->tap)
		return;
	if (!strcmp(key, GP_F_BYTES)) {
		tw->ev.bytes = v;
		tw->ev.has_bytes = 1;
	} else if (!strcmp(key, GP_F_DEVICE)) {
		tw->ev.device = v;
		tw->ev.has_device = 1;
	} else if (!strcmp(key, GP_F_TOTAL_MEMORY)) {
		tw->ev.total_memory = v;
	}
}

void gp_tw_arg_i64(struct gp_trace_writer *tw, const char *key, int64_t v)
{
	if (arg_key(tw, key) == 0)
		gp_buf_i64(&tw->line, v);
}

void gp_tw_arg_hex(struct gp_trace_writer *tw, const char *key, uint64_t v)
{
	if (arg_key(tw, key) != 0)
		return;
	gp_buf_hex_str(&tw->line, v);
	if (!tw->tap)
		return;
	if (!strcmp(key, GP_F_ADDR)) {
		tw->ev.addr = v;
		tw->ev.has_addr = 1;
	} else if (!strcmp(key, GP_F_POOL)) {
		tw->ev.pool = v;
		tw->ev.has_pool = 1;
	}
}

void gp_tw_arg_bool(struct gp_trace_writer *tw, const char *key, int v)
{
	if (arg_key(tw, key) != 0)
		return;
	gp_buf_puts(&tw->line, v ? "true" : "false");
	if (tw->tap && !strcmp(key, GP_F_ASYNC))
		tw->ev.async = v != 0;
}

void gp_tw_arg_double(struct gp_trace_writer *tw, const char *key, double v)
{
	if (arg_key(tw, key) == 0)
		gp_buf_double(&tw->line, v);
}

void gp_tw_arg_raw(struct gp_trace_writer *tw, const char *key, const char *json, size_t n)
{
	if (arg_key(tw, key) != 0)
		return;
	if (n == 0)
		gp_buf_puts(&tw->line, "null"); /* nothing is not a JSON value */
	else
		gp_buf_append(&tw->line, json, n);
}

/* Closes args and the object; returns 0 if the line is complete and sound. */
static int finish_event(struct gp_trace_writer *tw)
{
	int r;

	if (tw->state == EV_NONE)
		return -EINVAL;
	if (tw->state == EV_ARGS)
		gp_buf_putc(&tw->line, '}');
	gp_buf_putc(&tw->line, '}');
	r = tw->ev_err ? tw->ev_err : tw->line.failed;
	tw->state = EV_NONE;
	return r;
}

int gp_tw_end(struct gp_trace_writer *tw)
{
	int r;

	if (tw->stopped) {
		gp_tw_cancel(tw); /* a writer stopped (gp_tw_fail) writes nothing more */
		return tw->stopped;
	}
	if ((r = finish_event(tw)))
		return tw_fail(tw, r);
	gp_buf_append(&tw->line, ",\n", 2);
	if (tw->line.failed)
		return tw_fail(tw, tw->line.failed);
	r = sink_write(tw, tw->line.data, tw->line.len);
	if (r)
		return tw_fail(tw, r);
	tw->events++;
	if (tw->tap) {
		tw->ev.line = tw->line.data;
		tw->ev.len = tw->line.len - 2;
		tw->tap(tw->tap_ctx, &tw->ev);
	}
	return 0;
}

int gp_tw_take(struct gp_trace_writer *tw, const char **line, size_t *len)
{
	int r = finish_event(tw);

	if (r)
		return r;
	*line = tw->line.data;
	*len = tw->line.len;
	return 0;
}

void gp_tw_cancel(struct gp_trace_writer *tw)
{
	gp_buf_reset(&tw->line);
	tw->state = EV_NONE;
	tw->ev_err = 0;
}

int gp_tw_flush(struct gp_trace_writer *tw)
{
	int r;

	if (tw->stopped)
		return tw->stopped;
	if (tw->ring)
		return tw->err;
	r = gp_gz_flush(tw->gz);

	if (r)
		return tw_fail(tw, r);
	tw->flushes++;
	return 0;
}

int gp_tw_close(struct gp_trace_writer *tw, struct gp_tw_stats *stats)
{
	char end_buf[160];
	const char *final;
	int r;

	if (!tw) {
		if (stats)
			memset(stats, 0, sizeof(*stats));
		return 0;
	}
	if (tw->ring) {
		/* the ring's dumps end the trace; its owner frees the ring */
		gp_tw_get_stats(tw, stats);
		r = tw->err;
		gp_buf_free(&tw->line);
		free(tw);
		return r;
	}
	if (tw->state == EV_NONE) {
		/* allowed: the header comment promises it */
		final = minimal_end(end_buf, sizeof(end_buf));
	} else {
		r = finish_event(tw);
		if (!r)
			gp_buf_append(&tw->line, "\n]\n", 3);
		if (!r && tw->line.failed)
			r = tw->line.failed;
		if (r) {
			/* The caller's final event is unusable (misuse, out of
			 * memory), yet the array must still end validly. */
			tw_fail(tw, r);
			final = minimal_end(end_buf, sizeof(end_buf));
		} else {
			final = NULL;
		}
	}
	if (final) {
		r = gp_gz_write(tw->gz, final, strlen(final));
		if (!r)
			r = gp_gz_write(tw->gz, "\n]\n", 3);
	} else {
		r = gp_gz_write(tw->gz, tw->line.data, tw->line.len);
	}
	if (r)
		tw_fail(tw, r);
	else
		tw->events++;
	r = gp_gz_finish(tw->gz);
	if (r)
		tw_fail(tw, r);
	gp_tw_get_stats(tw, stats);
	r = gp_gz_close(tw->gz); /* closes the fd */
	if (r)
		tw_fail(tw, r);
	r = tw->err;
	gp_buf_free(&tw->line);
	free(tw);
	return r;
}

void gp_tw_abandon(struct gp_trace_writer *tw)
{
	if (!tw)
		return;
	if (tw->gz)
		gp_gz_abandon(tw->gz);
	gp_buf_free(&tw->line);
	free(tw);
}

void gp_tw_get_stats(const struct gp_trace_writer *tw, struct gp_tw_stats *stats)
{
	if (!stats)
		return;
	stats->events = tw->events;
	if (tw->ring) {
		struct gp_gz_ring_stats rs;

		gp_gz_ring_stats(tw->ring, &rs);
		stats->bytes_in = tw->diverted_in + rs.in_bytes + rs.dropped_in_bytes + rs.pending_in;
		stats->bytes_out = tw->diverted_out + rs.bytes + rs.dropped_bytes;
	} else {
		stats->bytes_in = gp_gz_bytes_in(tw->gz);
		stats->bytes_out = gp_gz_bytes_out(tw->gz);
	}
	stats->flushes = tw->flushes;
}

int gp_tw_error(const struct gp_trace_writer *tw)
{
	return tw->err;
}
