/* PyTorch's own memory counts as counter tracks.
 *
 * The PyTorch hooks write PyTorch's allocated and reserved bytes into the
 * trace as NVTX marks (native mode): `gpuprof:torch.memory {...}` samples
 * and, with --torch-history, the allocator's whole history in
 * `gpuprof:torch.history {...}` parts at exit (profiler/python/
 * gpuprof_history.py; TRACE_FORMAT.md). `gpuprof analyze` reads the marks;
 * Perfetto shows a mark as a tick with a long name, not as a line beside
 * "GPU memory". This module turns those marks into counter points so the
 * writer can draw them as counter tracks ("PyTorch sampled", "PyTorch
 * history", args `allocated` and `reserved`).
 *
 * The marks come from the traced program's Python, so they are parsed
 * strictly (our own format only, every number range-checked) and a mark that
 * does not parse gives no point at all; the mark itself is written as it is.
 * Points of one track and device come out in time order: a point older than
 * the last one given is left out and counted (samples marked by two threads
 * may cross).
 *
 * No CUPTI here: the unit test drives it directly. Not thread-safe (the
 * writer thread only). Nothing is allocated. */
#ifndef GPUPROF_TORCH_COUNTERS_H
#define GPUPROF_TORCH_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#define GP_TC_MAX_DEVICES 64
/* History points drawn per trace, at most: each costs the writer about
 * 1-2 µs at the program's exit (bench/RESULTS.md, cost), and the
 * writer has 10 s to finish there. Twice the default ring
 * (GPUPROF_TORCH_HISTORY_ENTRIES); past it the history's later points are
 * left out of the track (the marks keep them all). */
#define GP_TC_MAX_HISTORY_POINTS 2000000

enum gp_tc_track { GP_TC_SAMPLED, GP_TC_HISTORY, GP_TC_TRACKS };

/* Names of the counter events, as in TRACE_FORMAT.md. */
extern const char *const gp_tc_names[GP_TC_TRACKS];

struct gp_tc_point {
	int64_t ts; /* ns on the trace's relative clock, as the mark's */
	uint64_t allocated, reserved;
	uint32_t device;
};

typedef void (*gp_tc_emit_fn)(void *ctx, enum gp_tc_track track, const struct gp_tc_point *p);

struct gp_torch_counters {
	int64_t last_ts[GP_TC_TRACKS][GP_TC_MAX_DEVICES];
	/* a device's history is placed on the trace's clock with the offset of
	 * its first history mark, as gpuprof analyze places it, so that its
	 * points keep their order across marks */
	int64_t hist_off[GP_TC_MAX_DEVICES];
	uint64_t hist_off_set; /* bit per device */
	uint64_t points;       /* given to emit */
	uint64_t history_points, max_history_points; /* of them, and the bound */
	/* older than their track's last point, before the trace began, or past
	 * max_history_points */
	uint64_t left_out;
	uint64_t bad_marks;    /* torch memory marks that did not parse */
};

/* max_history_points: GP_TC_MAX_HISTORY_POINTS (tests lower it) */
void gp_tc_init(struct gp_torch_counters *tc);

/* text, len: an NVTX mark's message (not NUL-terminated); ts: the mark's
 * time. Returns 1 if it was a torch memory mark and its points were given
 * to emit (in order), 0 if it is no such mark, -EINVAL if it is one that
 * does not parse (nothing given). */
int gp_tc_mark(struct gp_torch_counters *tc, const char *text, size_t len, int64_t ts,
	       gp_tc_emit_fn emit, void *ctx);

#endif
