/* The flight recorder: ring, window head and dumps (flight.h). */
#include "flight.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gz_ring.h"
#include "fd_write.h"
#include "flight_sync.h"
#include "gz_sink.h"
#include "json_buf.h"
#include "outline.h"
#include "state.h"
#include "trace_format.h"
#include "trace_names.h"
#include "window_head.h"

/* A segment each second: a window is kept to the second, and the head is
 * replayed once a second (its cost: the live set's lines, compressed).
 * GPUPROF_SEAL_MS changes it, for measurements. */
#define SEAL_MS 1000
/* The window head's text at most: past it lines are left out (counted) */
#define HEAD_MAX_BYTES ((size_t)256 << 20)
/* Dumps beside the trace at most, so that a program failing in a loop
 * never fills a disk */
#define MAX_DUMPS 64
/* The gzip level of the ring: the trace file's (inject.c) */
#define RING_LEVEL 1

struct gp_flight {
	struct gp_gz_ring *ring;         /* owned */
	struct gp_window_head *head;     /* owned */
	struct gp_outline *outline;      /* owned */
	struct gp_trace_writer *tw;      /* borrowed: the caller's */
	struct gp_gz_sink *file;         /* the trace's own file: "[", meta, the outline; owned */
	int fd;                          /* the file's descriptor once handed over (the end), owned */
	char *meta;                      /* the meta line with "[" before it: each dump's head */
	size_t meta_len;
	char *path;                      /* owned */
	int64_t host_pid;
	int window_s;
	uint64_t next_seal_ms;
	unsigned dumps;                  /* written beside the trace */
	int oom_pending;
	int64_t oom_ts_ns;               /* the error's time, while oom_pending */
	uint64_t oom_hold_until_ms;      /* one out-of-memory dump per window */
	unsigned signals_done;
	struct gp_flight_when when;
	uint8_t above[GP_OUTLINE_MAX_DEVICES]; /* device memory over the threshold */
	int threshold_pending;
	uint64_t threshold_hold_until_ms;
	/* ranges dumped whole (steps, cudaProfilerStart..Stop): the first
	 * segment of each, open while *_open */
	int steps_open, profiler_open;
	uint64_t steps_seq, profiler_seq;
	/* the steps as marked: the last, when, how long it took */
	uint64_t last_step;
	int64_t last_step_ts_ns, step_ns;
	/* a run directory's SIGUSR1: the dump waits for this step's mark */
	uint64_t usr1_seq, usr1_step, usr1_deadline_ms;
	int cut;                         /* the tap asks for a seal or a dump (CUT_*) */
	int in_cut;
	int failed;                      /* said once; the ring is off */
	/* The default trace (when.cap_bytes): the writer writes the trace's
	 * file in full, the head and the outline watch, the outline goes to
	 * an unlinked file (file); at the cap, the trace so far becomes the
	 * dump STEM.dump0 and a flight recorder goes on under the trace's name */
	int full;
};

/* What the tap asks for at the end of the line it is shown */
enum { CUT_STEPS_BEGIN = 1, CUT_STEPS_END = 2, CUT_PROFILER_BEGIN = 4, CUT_PROFILER_END = 8, CUT_USR1 = 16 };

/* SIGUSR1s received: the handler only counts them. */
static _Atomic unsigned usr1_asked;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr1_asked, 1);
}

/* SIGUSR1 asks for a dump, where the program has not taken it: left to its
 * default action it would end the program, which is what it never does
 * here. */
static void watch_usr1(void)
{
	struct sigaction old, act;

	if (sigaction(SIGUSR1, NULL, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
		return;
	memset(&act, 0, sizeof(act));
	act.sa_handler = on_usr1;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	sigaction(SIGUSR1, &act, NULL);
}

static void fail(struct gp_flight *f, const char *what, int err);

/* The meta line opens the trace's file and every dump ("[" and it: the
 * window head leaves it to them). */
static void keep_meta(struct gp_flight *f, const struct gp_tw_event *ev)
{
	struct gp_gz_ring_stats rs;
	int err;

	gp_gz_ring_stats(f->ring, &rs);
	if (f->meta || (!f->full && (rs.segments || rs.dropped_segments || rs.pending_in != ev->len + 2))) {
		fail(f, "the meta", -EPROTO); /* not the first line: dumps would hold two */
		return;
	}
	if (!(f->meta = malloc(ev->len + 4))) {
		fail(f, "keeping the meta", -ENOMEM);
		return;
	}
	memcpy(f->meta, "[\n", 2);
	memcpy(f->meta + 2, ev->line, ev->len);
	memcpy(f->meta + 2 + ev->len, ",\n", 2);
	f->meta_len = ev->len + 4;
	if ((!f->full && (err = gp_gz_ring_discard(f->ring))) || (err = gp_gz_write(f->file, f->meta, f->meta_len)) ||
	    (err = gp_gz_flush(f->file)))
		fail(f, "writing the trace", err);
}

static void cut(struct gp_flight *f, int64_t ts_ns);

/* The process's device memory on device (PyTorch's reserved or CUDA's
 * device allocations, the larger) crossing the threshold upward asks for a
 * dump; falling a tenth below it, the next crossing may. */
static void watch_threshold(struct gp_flight *f, uint64_t device)
{
	uint64_t held, total, at;

	if ((!f->when.at_bytes && !f->when.at_permille) || device >= GP_OUTLINE_MAX_DEVICES)
		return;
	held = gp_outline_held(f->outline, (unsigned)device, &total);
	at = f->when.at_bytes ? f->when.at_bytes : total / 1000 * f->when.at_permille;
	if (!at)
		return; /* a share of a device whose size is not known yet */
	if (held >= at && !f->above[device]) {
		f->above[device] = 1;
		f->threshold_pending = 1;
	} else if (held < at - at / 10) {
		f->above[device] = 0;
	}
}

/* step:N ends step N: step first begins at step:(first - 1) (step 1: at
 * the start, its range open from the first segment) and the range ends at
 * step:last. */
static void watch_steps(struct gp_flight *f, const struct gp_tw_event *ev)
{
	uint64_t n;

	if (!(n = gp_outline_step_mark(ev)))
		return;
	if (f->last_step_ts_ns)
		f->step_ns = ev->ts_ns - f->last_step_ts_ns;
	f->last_step = n;
	f->last_step_ts_ns = ev->ts_ns;
	if (f->usr1_step && n >= f->usr1_step)
		f->cut |= CUT_USR1;
	if (!f->when.step_first)
		return;
	if (n + 1 == f->when.step_first)
		f->cut |= CUT_STEPS_BEGIN;
	if (n == f->when.step_last && f->steps_open)
		f->cut |= CUT_STEPS_END;
}

/* cudaProfilerStart .. cudaProfilerStop (or the driver's): the range Nsight
 * users mark */
static void watch_profiler(struct gp_flight *f, const struct gp_tw_event *ev)
{
#define STARTS(lit) gp_tw_ev_starts(ev, lit, sizeof(lit) - 1)
	if (STARTS("cudaProfilerStart") || STARTS("cuProfilerStart"))
		f->cut |= CUT_PROFILER_BEGIN;
	else if ((STARTS("cudaProfilerStop") || STARTS("cuProfilerStop")) && f->profiler_open)
		f->cut |= CUT_PROFILER_END;
#undef STARTS
}

/* The writer's tap: every line to the head and the outline; an
 * out-of-memory error, a threshold, a range's ends ask for a dump. */
static void observe(void *ctx, const struct gp_tw_event *ev)
{
	struct gp_flight *f = ctx;

	if (ev->ph == 'i' && gp_tw_ev_is(ev, GP_EV_META))
		keep_meta(f, ev);
	gp_wh_observe(f->head, ev);
	gp_outline_observe(f->outline, ev);
	if (!ev->cat || f->full)
		return; /* the whole trace is being written: nothing to dump */
	if (ev->ph == 'i' && !strcmp(ev->cat, GP_CAT_MEMORY)) {
		if ((gp_tw_ev_is(ev, GP_EV_OOM) || gp_tw_ev_is(ev, GP_EV_TORCH_OOM)) && !f->oom_pending) {
			f->oom_pending = 1;
			f->oom_ts_ns = ev->ts_ns;
		}
		else if (ev->has_device)
			watch_threshold(f, ev->device);
	} else if (ev->ph == 'i' && !strcmp(ev->cat, GP_CAT_NVTX)) {
		watch_steps(f, ev);
	} else if (ev->ph == 'X' && (!strcmp(ev->cat, GP_CAT_CUDA_RUNTIME) || !strcmp(ev->cat, GP_CAT_CUDA_DRIVER))) {
		watch_profiler(f, ev);
	}
	/* last: sealing writes through the writer, whose event ev is */
	if (f->cut)
		cut(f, ev->ts_ns);
}

/* The default trace's outline, until its cap: into a file beside the trace,
 * unlinked at once (nothing stays of it if the program is killed; the
 * trace holds everything then), readable for gp_gz_move_to. fd or -errno. */
static int open_outline_file(const char *path)
{
	char tmp[4096];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.outline-%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if ((fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		return -errno;
	if (unlink(tmp) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int gp_flight_new(struct gp_flight **out, int fd, const char *path, int64_t host_pid, int window_s,
		  size_t ring_bytes, const struct gp_flight_when *when, struct gp_trace_writer **tw)
{
	struct gp_flight *f;
	int err = -ENOMEM, file_fd;

	*out = NULL;
	*tw = NULL;
	if (!(f = calloc(1, sizeof(*f))))
		goto fail;
	f->fd = -1;
	if (!(f->path = strdup(path)))
		goto fail;
	if (when)
		f->when = *when;
	f->full = f->when.cap_bytes > 0;
	if (f->full && (file_fd = open_outline_file(path)) < 0) {
		err = file_fd;
		goto fail;
	}
	/* the trace's file is the writer's until the cap, else the outline's */
	err = gp_gz_open_fd(&f->file, f->full ? file_fd : fd, RING_LEVEL);
	if (!f->full)
		fd = -1; /* the sink's, even on failure */
	if (err)
		goto fail;
	f->host_pid = host_pid;
	f->window_s = window_s;
	/* steps from the first: the range is open from the start */
	f->steps_open = f->when.step_first == 1 && !f->full;
	if ((err = gp_gz_ring_new(&f->ring, ring_bytes, RING_LEVEL)) || (err = gp_wh_new(&f->head, HEAD_MAX_BYTES)) ||
	    (err = gp_outline_new(&f->outline)))
		goto fail;
	err = f->full ? gp_tw_open_fd(&f->tw, fd, RING_LEVEL) : gp_tw_open_ring(&f->tw, f->ring);
	fd = -1; /* the writer's, even on failure */
	if (err)
		goto fail;
	gp_tw_set_tap(f->tw, observe, f);
	if (!f->full)
		watch_usr1();
	*tw = f->tw; /* handed over: the caller closes it */
	*out = f;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	gp_flight_free(f);
	return err;
}

int gp_flight_full(const struct gp_flight *f)
{
	return f->full;
}

static int replay_line(void *ctx, const char *line, size_t len)
{
	return gp_tw_write_line(ctx, line, len);
}

/* The outline's closed records, into the trace's file. */
static int write_outline(struct gp_flight *f)
{
	struct gp_gz_ring_stats rs;
	struct gp_outline_rec r;
	const char *line;
	size_t len;
	int err;

	gp_gz_ring_stats(f->ring, &rs);
	while (gp_outline_next(f->outline, &r)) {
		gp_outline_format(f->tw, f->host_pid, &r, rs.dropped_segments, rs.dropped_in_bytes);
		if ((err = gp_tw_take(f->tw, &line, &len)) || (err = gp_gz_write(f->file, line, len)) ||
		    (err = gp_gz_write(f->file, ",\n", 2)))
			return err;
	}
	return 0;
}

/* In a run directory, where this process's steps are (flight_sync.h), for
 * the launcher's SIGUSR1; a failure only leaves the file older. */
static void publish_step(struct gp_flight *f)
{
	char name[64], text[96];
	struct timespec t;
	int n;

	if (!f->when.run_dir || !*f->when.run_dir)
		return;
	clock_gettime(CLOCK_REALTIME, &t);
	snprintf(name, sizeof(name), "%ld%s", (long)getpid(), GP_FLIGHT_SYNC_STEP_SUFFIX);
	n = snprintf(text, sizeof(text), "%" PRIu64 " %" PRId64 " %" PRId64 "\n", f->last_step,
		     (int64_t)t.tv_sec * 1000000000 + t.tv_nsec, f->step_ns);
	gp_flight_sync_put(f->when.run_dir, name, text, (size_t)n);
}

/* SIGUSR1 in a run directory: the launcher's request names the step to
 * dump at; 1 when armed, 0 to dump now (past it, no request, no steps). */
static int arm_usr1(struct gp_flight *f, uint64_t now_ms)
{
	char text[96];
	unsigned long long seq, step;

	if (!f->when.run_dir || !*f->when.run_dir ||
	    gp_flight_sync_get(f->when.run_dir, GP_FLIGHT_SYNC_REQUEST, text, sizeof(text)) ||
	    sscanf(text, "%llu %llu", &seq, &step) != 2 || seq == f->usr1_seq)
		return 0;
	f->usr1_seq = seq;
	if (!f->last_step || step <= f->last_step)
		return 0;
	f->usr1_step = step;
	f->usr1_deadline_ms = now_ms + GP_FLIGHT_SYNC_WAIT_MS;
	return 1;
}

static int open_segment(struct gp_flight *f, uint64_t now_ms, int64_t ts_ns);

/* Ends the segment being written and opens the next with the run so far;
 * the outline so far goes to disk. */
static int seal(struct gp_flight *f, uint64_t now_ms, int64_t ts_ns)
{
	int err;

	if ((err = write_outline(f)) || (err = gp_gz_flush(f->file)))
		return err;
	publish_step(f);
	if ((err = gp_gz_ring_seal(f->ring, (int64_t)now_ms)))
		return err;
	/* a range to dump whole keeps what the ring holds (up to its cap) */
	if (!f->steps_open && !f->profiler_open)
		gp_gz_ring_drop_before(f->ring, (int64_t)now_ms - (int64_t)f->window_s * 1000);
	return open_segment(f, now_ms, ts_ns);
}

/* The segment being written opens with the run so far: the head's replay
 * and a gpuprof.window (a dump beginning there begins with them). */
static int open_segment(struct gp_flight *f, uint64_t now_ms, int64_t ts_ns)
{
	struct gp_wh_stats st;
	int err;

	if ((err = gp_wh_replay(f->head, replay_line, f->tw)))
		return err;
	gp_wh_stats(f->head, &st);
	gp_tw_begin(f->tw, GP_PH_WINDOW, GP_EV_WINDOW, GP_CAT_GPUPROF, f->host_pid, 0, ts_ns);
	gp_tw_field_str(f->tw, GP_T_S, "g");
	gp_tw_args_begin(f->tw);
	gp_tw_arg_u64(f->tw, GP_F_REPLAYED, st.lines);
	gp_tw_arg_u64(f->tw, GP_F_LIVE, st.live);
	if ((err = gp_tw_end(f->tw)))
		return err;
	f->next_seal_ms = now_ms + (f->when.seal_ms ? f->when.seal_ms : SEAL_MS);
	return gp_gz_ring_end_opening(f->ring);
}

static void fail(struct gp_flight *f, const char *what, int err)
{
	if (f->failed)
		return;
	f->failed = 1;
	if (f->full) {
		gp_rec_say("the flight recorder that would go on from the trace's cap failed (%s: %s); the "
			   "trace will end at its cap", what, strerror(-err));
		return;
	}
	gp_rec_say("the flight recorder failed (%s: %s); no more dumps, the trace ends here", what,
		   strerror(-err));
	/* a ring no longer sealed would grow without end: the writer stops
	 * (writer_thread.c leaves the file as it is, a prefix recover ends) */
	gp_tw_fail(f->tw, err);
}

/* A dump's last lines into *tail (gp_buf_init'ed here; the caller frees
 * it): gpuprof.dump, then end_line or, for a program going on, an end
 * without counts, and "]". 0 or -errno. */
static int dump_tail(struct gp_flight *f, const char *reason, unsigned seq, int64_t ts_ns, const char *end_line,
		     size_t end_len, struct gp_buf *tail)
{
	struct gp_gz_ring_stats rs;
	struct gp_wh_stats ws;
	struct gp_outline_stats os;
	const char *line;
	size_t len;
	int err;

	gp_buf_init(tail, 0);
	gp_gz_ring_stats(f->ring, &rs);
	gp_wh_stats(f->head, &ws);
	gp_outline_stats(f->outline, &os);
	gp_tw_begin(f->tw, GP_PH_DUMP, GP_EV_DUMP, GP_CAT_GPUPROF, f->host_pid, 0, ts_ns);
	gp_tw_field_str(f->tw, GP_T_S, "g");
	gp_tw_args_begin(f->tw);
	gp_tw_arg_str(f->tw, GP_F_REASON, reason);
	gp_tw_arg_u64(f->tw, GP_F_SEQ, seq);
	gp_tw_arg_u64(f->tw, GP_F_WINDOW_S, (uint64_t)f->window_s);
	gp_tw_arg_u64(f->tw, GP_F_DROPPED_SEGMENTS, rs.dropped_segments);
	gp_tw_arg_u64(f->tw, GP_F_DROPPED_BYTES, rs.dropped_in_bytes);
	gp_tw_arg_u64(f->tw, GP_F_DROPPED_GZ_BYTES, rs.dropped_bytes);
	gp_tw_arg_u64(f->tw, GP_F_RING_BYTES, rs.bytes);
	gp_tw_arg_u64(f->tw, GP_F_HEAD_BYTES, ws.bytes);
	gp_tw_arg_u64(f->tw, GP_F_OUTLINE_BYTES, os.bytes);
	if ((err = gp_tw_take(f->tw, &line, &len)))
		return err;
	gp_buf_append(tail, line, len);
	gp_buf_puts(tail, ",\n");
	if (!end_line) {
		/* a dump of a program going on: an end without counts */
		gp_tw_begin(f->tw, GP_PH_END, GP_EV_END, GP_CAT_GPUPROF, f->host_pid, 0, ts_ns);
		gp_tw_field_str(f->tw, GP_T_S, "g");
		gp_tw_args_begin(f->tw);
		if ((err = gp_tw_take(f->tw, &end_line, &end_len)))
			return err;
	}
	gp_buf_append(tail, end_line, end_len);
	gp_buf_puts(tail, "\n]\n");
	return tail->failed;
}

/* The ring, sealed now, as one trace into fd: "[" and the meta, the kept
 * segments (the first with its opening), a gpuprof.dump and the end; at
 * the end (so_far), after the trace's file so far instead of "[" and the
 * meta. */
static int dump_to(struct gp_flight *f, int fd, uint64_t from_seq, const struct gp_gz_member *so_far,
		   const char *reason, unsigned seq, int64_t ts_ns, const char *end_line, size_t end_len)
{
	struct gp_buf tail;
	int err;

	err = dump_tail(f, reason, seq, ts_ns, end_line, end_len, &tail);
	if (!err && so_far)
		err = gp_gz_ring_dump_after(f->ring, fd, from_seq, so_far, tail.data, tail.len);
	else if (!err)
		err = gp_gz_ring_dump(f->ring, fd, from_seq, f->meta ? f->meta : "[\n", f->meta ? f->meta_len : 2, tail.data,
				      tail.len);
	gp_buf_free(&tail);
	return err;
}

/* The trace's file so far ("[", the meta, the outline: the beginning of a
 * gzip member) copied into fd, *so_far what it holds, so that a dump holds
 * the outline of the run up to it. 0 or -errno (fd then holds part). */
static int copy_file_so_far(struct gp_flight *f, int fd, struct gp_gz_member *so_far)
{
	uint64_t n;
	int in, err;

	if ((err = gp_gz_sync_point(f->file, so_far, &n)))
		return err;
	if ((in = open(f->path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	err = gp_fd_copy(in, n, fd); /* -EIO: the file is shorter than written, not ours now */
	close(in);
	return err;
}

/* from_seq: the first segment it holds (0: the window's first). */
static uint64_t mono_ms(void);

/* cause_ts_ns: the time of what asked for it (an out-of-memory error),
 * said with the dump; INT64_MIN: none */
static void dump_beside(struct gp_flight *f, const char *reason, uint64_t from_seq, uint64_t now_ms,
			int64_t ts_ns, int64_t cause_ts_ns)
{
	struct gp_gz_member so_far;
	char path[4096];
	int fd, err;

	if (f->dumps == MAX_DUMPS) {
		gp_rec_say("flight recorder: %u dumps written; no more before the end", MAX_DUMPS);
		f->dumps++;
		return;
	}
	if (f->dumps > MAX_DUMPS)
		return;
	if ((err = seal(f, now_ms, ts_ns))) {
		fail(f, "sealing", err);
		return;
	}
	f->dumps++;
	if ((err = gp_dump_trace_path(path, sizeof(path), f->path, f->dumps))) {
		fail(f, "naming a dump", err);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		gp_rec_say("flight recorder: cannot create %s: %s", path, strerror(errno));
		return;
	}
	/* the outline so far first; failing that, the meta alone */
	if (copy_file_so_far(f, fd, &so_far) == 0) {
		err = dump_to(f, fd, from_seq, &so_far, reason, f->dumps, ts_ns, NULL, 0);
	} else if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		err = -errno;
	} else {
		err = dump_to(f, fd, from_seq, NULL, reason, f->dumps, ts_ns, NULL, 0);
	}
	if (close(fd) != 0 && !err)
		err = -errno;
	if (err)
		gp_rec_say("flight recorder: writing %s failed: %s", path, strerror(-err));
	else if (cause_ts_ns == INT64_MIN)
		gp_rec_say("flight recorder: the last %d s written to %s (%s) in %.2f s", f->window_s, path, reason,
			   (double)(mono_ms() - now_ms) / 1e3);
	else
		gp_rec_say("flight recorder: the last %d s written to %s (%s) in %.2f s, %.2f s after it", f->window_s,
			   path, reason, (double)(mono_ms() - now_ms) / 1e3,
			   (double)(ts_ns - cause_ts_ns) / 1e9 + (double)(mono_ms() - now_ms) / 1e3);
}

static uint64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* A range's first line seals the segment it is in, so that the next one
 * begins the range; its last seals and dumps from there. Called by the
 * tap, last: the seal writes the window head's replay through the writer
 * (its lines go to the tap again, which does not cut then). */
static void cut(struct gp_flight *f, int64_t ts_ns)
{
	int what = f->cut;
	uint64_t now_ms = mono_ms();
	int err;

	f->cut = 0;
	if (f->in_cut || f->failed)
		return;
	f->in_cut = 1;
	if (what & CUT_USR1) {
		f->usr1_step = 0;
		dump_beside(f, "signal", 0, now_ms, ts_ns, INT64_MIN);
	}
	if (what & (CUT_STEPS_END | CUT_PROFILER_END)) {
		if (what & CUT_STEPS_END) {
			f->steps_open = 0;
			dump_beside(f, "steps", f->steps_seq, now_ms, ts_ns, INT64_MIN);
		}
		if (what & CUT_PROFILER_END) {
			f->profiler_open = 0;
			dump_beside(f, "profiler", f->profiler_seq, now_ms, ts_ns, INT64_MIN);
		}
	} else if ((what & (CUT_STEPS_BEGIN | CUT_PROFILER_BEGIN)) && (err = seal(f, now_ms, ts_ns))) {
		fail(f, "sealing", err);
	}
	if (what & CUT_STEPS_BEGIN) {
		f->steps_open = 1;
		f->steps_seq = gp_gz_ring_next_seq(f->ring);
	}
	if (what & CUT_PROFILER_BEGIN) {
		f->profiler_open = 1;
		f->profiler_seq = gp_gz_ring_next_seq(f->ring);
	}
	f->in_cut = 0;
}

/* The trace's start, up to the cap: ended as a dump (reason cap) and
 * named STEM.dump0 (the name is free: dumps count from 1). */
static int end_start(struct gp_flight *f, struct gp_gz_sink *start, const char *start_path, int64_t ts_ns)
{
	struct gp_buf tail;
	int err;

	if (rename(f->path, start_path) != 0) {
		gp_gz_abandon(start);
		return -errno;
	}
	if ((err = dump_tail(f, "cap", 0, ts_ns, NULL, 0, &tail)) == 0)
		err = gp_gz_write(start, tail.data, tail.len);
	gp_buf_free(&tail);
	if (err) {
		gp_gz_abandon(start);
		return err;
	}
	return gp_gz_close(start);
}

/* A size as it was likely given: "1 GiB", "64 KiB", "100 MB" */
static const char *size_text(char *buf, size_t cap, uint64_t bytes)
{
	static const char *const binary[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	static const char *const decimal[] = { "B", "kB", "MB", "GB", "TB" };
	unsigned u = 0, base = bytes % 1024 == 0 ? 1024 : 1000;

	while (u < 4 && bytes >= base && bytes % base == 0) {
		bytes /= base;
		u++;
	}
	snprintf(buf, cap, "%" PRIu64 " %s", bytes, base == 1024 ? binary[u] : decimal[u]);
	return buf;
}

/* The default trace at its cap: the writer goes on into the ring, the
 * trace so far becomes STEM.dump0, and under the trace's name the outline
 * so far (moved), a gpuprof.cap, and from here the flight recorder's
 * file. Its first segment opens with the run so far, as any after a seal. */
static int go_flight(struct gp_flight *f, uint64_t now_ms, int64_t ts_ns, uint64_t written)
{
	struct gp_gz_sink *start = NULL;
	char start_path[4096], size[32];
	const char *start_name, *line;
	size_t len;
	int err, fd;

	if ((err = gp_dump_trace_path(start_path, sizeof(start_path), f->path, 0)) || (err = write_outline(f)) ||
	    (err = gp_tw_divert(f->tw, f->ring, &start)))
		return err;
	f->full = 0; /* from here a failure stops the writer (fail) */
	if ((err = end_start(f, start, start_path, ts_ns)))
		return err;
	fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if ((err = gp_gz_move_to(f->file, fd)))
		return err;
	start_name = strrchr(start_path, '/');
	start_name = start_name ? start_name + 1 : start_path;
	gp_tw_begin(f->tw, GP_PH_CAP, GP_EV_CAP, GP_CAT_GPUPROF, f->host_pid, 0, ts_ns);
	gp_tw_field_str(f->tw, GP_T_S, "g");
	gp_tw_args_begin(f->tw);
	gp_tw_arg_u64(f->tw, GP_F_CAP_BYTES, f->when.cap_bytes);
	gp_tw_arg_u64(f->tw, GP_F_BYTES, written);
	gp_tw_arg_str(f->tw, GP_F_START, start_name);
	gp_tw_arg_u64(f->tw, GP_F_WINDOW_S, (uint64_t)f->window_s);
	if ((err = gp_tw_take(f->tw, &line, &len)) || (err = gp_gz_write(f->file, line, len)) ||
	    (err = gp_gz_write(f->file, ",\n", 2)) || (err = gp_gz_flush(f->file)) ||
	    (err = open_segment(f, now_ms, ts_ns)))
		return err;
	watch_usr1();
	gp_rec_say("the trace reached its size cap (%s, --trace-cap): the run so far is in %s; from here %s "
		   "keeps the outline of every step and the last %d s in full (dumps on out-of-memory errors "
		   "and SIGUSR1 beside it)",
		   size_text(size, sizeof(size), f->when.cap_bytes), start_path, f->path, f->window_s);
	return 0;
}

/* The default trace, written in full: the outline to its file each
 * second, and the flight recorder from the cap on. */
static void tick_full(struct gp_flight *f, uint64_t now_ms, int64_t ts_ns)
{
	struct gp_tw_stats st;
	int err;

	gp_tw_get_stats(f->tw, &st);
	if (f->failed) {
		if (st.bytes_out >= f->when.cap_bytes && !gp_tw_error(f->tw)) {
			char size[32];

			gp_rec_say("the trace reached its size cap (%s, --trace-cap) and ends there",
				   size_text(size, sizeof(size), f->when.cap_bytes));
			gp_tw_fail(f->tw, -EFBIG);
		}
		return;
	}
	gp_outline_tick(f->outline, ts_ns);
	if (st.bytes_out >= f->when.cap_bytes) {
		if ((err = go_flight(f, now_ms, ts_ns, st.bytes_out)))
			fail(f, "going on from the trace's cap", err);
		return;
	}
	if (now_ms < f->next_seal_ms)
		return;
	f->next_seal_ms = now_ms + (f->when.seal_ms ? f->when.seal_ms : SEAL_MS);
	if ((err = write_outline(f)) || (err = gp_gz_flush(f->file)))
		fail(f, "writing the outline", err);
}

void gp_flight_tick(struct gp_flight *f, uint64_t now_ms, int64_t ts_ns)
{
	unsigned asked = atomic_load(&usr1_asked);
	int err;

	if (f->full) {
		tick_full(f, now_ms, ts_ns);
		return;
	}
	if (f->failed)
		return;
	gp_outline_tick(f->outline, ts_ns);
	if (asked != f->signals_done) {
		f->signals_done = asked;
		if (!arm_usr1(f, now_ms))
			dump_beside(f, "signal", 0, now_ms, ts_ns, INT64_MIN);
	}
	if (f->usr1_step && now_ms >= f->usr1_deadline_ms) {
		f->usr1_step = 0; /* the step never came: now */
		dump_beside(f, "signal", 0, now_ms, ts_ns, INT64_MIN);
	}
	if (f->oom_pending && now_ms >= f->oom_hold_until_ms) {
		f->oom_pending = 0;
		f->oom_hold_until_ms = now_ms + (uint64_t)f->window_s * 1000;
		dump_beside(f, "oom", 0, now_ms, ts_ns, f->oom_ts_ns);
	}
	if (f->threshold_pending && now_ms >= f->threshold_hold_until_ms) {
		f->threshold_pending = 0;
		f->threshold_hold_until_ms = now_ms + (uint64_t)f->window_s * 1000;
		dump_beside(f, "threshold", 0, now_ms, ts_ns, INT64_MIN);
	}
	if (!f->failed && now_ms >= f->next_seal_ms && (err = seal(f, now_ms, ts_ns)))
		fail(f, "sealing", err);
}

int gp_flight_end(struct gp_flight *f, uint64_t now_ms, int64_t ts_ns, const char *end_line, size_t end_len)
{
	struct gp_gz_member so_far;
	struct gp_gz_sink *file = f->file;
	int err;

	if (f->failed)
		return -EIO;
	gp_outline_end(f->outline, ts_ns);
	/* an out-of-memory error in the last moments: the end's dump holds it */
	if ((err = seal(f, now_ms, ts_ns)))
		return err;
	f->file = NULL;
	if ((err = gp_gz_hand_over(file, &f->fd, &so_far)) ||
	    (err = dump_to(f, f->fd, 0, &so_far, "end", f->dumps + 1, ts_ns, end_line, end_len)))
		return err;
	return 0;
}

void gp_flight_free(struct gp_flight *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	/* a recorder that failed: what the file holds stays, a prefix recover reads */
	gp_gz_abandon(f->file);
	gp_outline_free(f->outline);
	free(f->meta);
	gp_wh_free(f->head);
	gp_gz_ring_free(f->ring);
	free(f->path);
	free(f);
}
