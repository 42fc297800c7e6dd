/* Chrome trace JSON ("JSON Array Format") writer, gzip-compressed.
 *
 * The file is a bare JSON array with one event per line:
 *   [\n
 *   {event},\n      <- every event ends with ",\n"
 *   ...
 *   {final event}\n  <- written by gp_tw_close(): no comma
 *   ]\n
 * A stream cut anywhere after a flush therefore holds whole lines up to the
 * flush; recovery keeps the complete lines and closes the array.
 *
 * Usage, one event at a time (not thread-safe; the writer thread owns it):
 *   gp_tw_begin(tw, 'X', "name", "cat", pid, tid, ts_ns);
 *   gp_tw_dur(tw, dur_ns);                  optional, X events
 *   gp_tw_field_*(tw, "key", v);            optional extra top-level fields
 *   gp_tw_args_begin(tw); gp_tw_arg_*(...)  optional args object
 *   gp_tw_end(tw);                          appends the line to the stream
 * ts_ns is relative to the trace's time base (already subtracted by caller);
 * it is written in microseconds with 3 decimals. gp_tw_arg_* opens args
 * itself if needed; gp_tw_dur/gp_tw_field_* after args make gp_tw_end() drop
 * the event with -EINVAL (they would land inside args). */
#ifndef GPUPROF_TRACE_WRITER_H
#define GPUPROF_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct gp_trace_writer;
struct gp_gz_ring;
struct gp_gz_sink;

struct gp_tw_stats {
	uint64_t events;
	uint64_t bytes_in;   /* JSON bytes before compression */
	uint64_t bytes_out;  /* compressed bytes written */
	uint64_t flushes;
};

/* Longest event line the writer produces, ",\n" included; gp_tw_end() fails
 * with -ENOMEM beyond it. gp_trace_recover() treats longer lines as corrupt. */
#define GP_TW_MAX_LINE ((size_t)64 << 20)

/* Takes ownership of fd, even on failure. Writes "[\n". Returns 0 or -errno. */
int gp_tw_open_fd(struct gp_trace_writer **out, int fd, int gz_level);

/* Writes into a flight recorder's ring instead (borrowed: it outlives tw),
 * none of the array's brackets: the ring's dump writes them. Flushing is
 * then the ring owner's seal, and gp_tw_flush() does nothing; gp_tw_close()
 * writes nothing more. */
int gp_tw_open_ring(struct gp_trace_writer **out, struct gp_gz_ring *ring);

/* The default trace reaching its cap (profiler/flight.c): the writer goes
 * on into ring (borrowed, as gp_tw_open_ring's) and hands over its file's
 * sink, flushed, to *file (the caller's now, to end). Its stats go on
 * counting what the file took. 0 or -errno (-EINVAL: not a file's writer;
 * the writer unchanged). */
int gp_tw_divert(struct gp_trace_writer *tw, struct gp_gz_ring *ring, struct gp_gz_sink **file);
/* A writer that must stop (the trace at its cap and no flight recorder to
 * go on into): every later call fails with err, as after a write error. */
void gp_tw_fail(struct gp_trace_writer *tw, int err);

/* What the writer knew of an event it wrote: the members it was given that
 * say what the event is about, for an observer of the lines (the flight
 * recorder's window head). Pointers are borrowed for the call only. */
struct gp_tw_event {
	const char *line;     /* the event's text, without ",\n" */
	size_t len;
	char ph;
	const char *name;     /* not NUL-terminated */
	size_t name_len;
	const char *cat;
	int64_t pid, tid, ts_ns;
	uint64_t id;          /* top-level id */
	uint64_t addr, pool;  /* args addr, pool */
	uint64_t bytes, device;
	uint8_t has_id, has_addr, has_pool, has_bytes, has_device;
	uint64_t total_memory; /* args total_memory (gpuprof.device), 0: none */
	uint8_t kind_device;  /* args kind is device (alloc, free) */
	uint8_t async;        /* args async is true: stream-ordered */
};
typedef void (*gp_tw_tap_fn)(void *ctx, const struct gp_tw_event *ev);
/* An observer's tests of an event's name: it is name; it begins with the
 * n bytes of prefix. */
static inline int gp_tw_ev_is(const struct gp_tw_event *ev, const char *name)
{
	size_t n = __builtin_strlen(name);

	return ev->name_len == n && __builtin_memcmp(ev->name, name, n) == 0;
}
static inline int gp_tw_ev_starts(const struct gp_tw_event *ev, const char *prefix, size_t n)
{
	return ev->name_len >= n && __builtin_memcmp(ev->name, prefix, n) == 0;
}
/* fn(ctx, ev) after every event gp_tw_end() writes; NULL: none. */
void gp_tw_set_tap(struct gp_trace_writer *tw, gp_tw_tap_fn fn, void *ctx);
/* Writes a whole event line built elsewhere (a replayed one: no ",\n",
 * the writer adds it), not shown to the tap. 0 or -errno. */
int gp_tw_write_line(struct gp_trace_writer *tw, const char *line, size_t len);

void gp_tw_begin(struct gp_trace_writer *tw, char ph, const char *name,
		 const char *cat, int64_t pid, int64_t tid, int64_t ts_ns);
/* Same, with a name that is not NUL-terminated (n bytes). */
void gp_tw_begin_n(struct gp_trace_writer *tw, char ph, const char *name, size_t n,
		   const char *cat, int64_t pid, int64_t tid, int64_t ts_ns);
void gp_tw_dur(struct gp_trace_writer *tw, int64_t dur_ns);
void gp_tw_field_str(struct gp_trace_writer *tw, const char *key, const char *v);
void gp_tw_field_u64(struct gp_trace_writer *tw, const char *key, uint64_t v);
void gp_tw_field_hex(struct gp_trace_writer *tw, const char *key, uint64_t v);
void gp_tw_args_begin(struct gp_trace_writer *tw);
void gp_tw_arg_str(struct gp_trace_writer *tw, const char *key, const char *v);
void gp_tw_arg_str_n(struct gp_trace_writer *tw, const char *key, const char *v, size_t n);
void gp_tw_arg_u64(struct gp_trace_writer *tw, const char *key, uint64_t v);
void gp_tw_arg_i64(struct gp_trace_writer *tw, const char *key, int64_t v);
void gp_tw_arg_hex(struct gp_trace_writer *tw, const char *key, uint64_t v);
void gp_tw_arg_bool(struct gp_trace_writer *tw, const char *key, int v);
void gp_tw_arg_double(struct gp_trace_writer *tw, const char *key, double v);
/* Raw JSON value (caller guarantees validity), e.g. an array built with gp_buf. */
void gp_tw_arg_raw(struct gp_trace_writer *tw, const char *key, const char *json, size_t n);
/* Closes args if open, closes the event, queues the line. 0 or -errno. */
int gp_tw_end(struct gp_trace_writer *tw);
/* Ends the event under construction without writing it and lends its
 * text (no ",\n"; valid until the next gp_tw_begin): the end of a flight
 * recorder's dump, written there. 0 or -errno. */
int gp_tw_take(struct gp_trace_writer *tw, const char **line, size_t *len);
/* Drops the event under construction (nothing is written). */
void gp_tw_cancel(struct gp_trace_writer *tw);

/* Makes everything written so far durable in the file (gzip sync flush). */
int gp_tw_flush(struct gp_trace_writer *tw);
/* The next event built is the final one: gp_tw_close() writes it without a
 * trailing comma, then "]\n", finishes the gzip member and closes the fd.
 * Call as: gp_tw_begin(...); ...args...; gp_tw_close(tw, stats).
 * If no event is under construction (or it cannot be written: misuse, out of
 * memory), close writes a minimal final event instead,
 *   {"ph":"i","s":"g","name":"gpuprof.end","cat":"gpuprof","pid":0,"tid":0,
 *    "ts":0.000,"args":{}}
 * so the file is always valid JSON. Frees tw. Returns the first error seen
 * (not building a final event is not an error), or 0. stats (may be NULL)
 * gets the final counts, the final event and gzip trailer included. */
int gp_tw_close(struct gp_trace_writer *tw, struct gp_tw_stats *stats);
/* The text of a gpuprof.end event as the minimal end above lays it out, up
 * to and including `"args":{`, with pid and ts given as JSON numbers' text:
 * recovery's end (trace_recover.c) has the same head. snprintf's return. */
int gp_tw_end_head(char *buf, size_t cap, const char *pid, const char *ts);
/* Forked child or fatal error: release without writing anything more. */
void gp_tw_abandon(struct gp_trace_writer *tw);
void gp_tw_get_stats(const struct gp_trace_writer *tw, struct gp_tw_stats *stats);
int gp_tw_error(const struct gp_trace_writer *tw); /* first error or 0 */

#endif
