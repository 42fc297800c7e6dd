/* The flight recorder's window head: the lines of the trace so far that
 * still matter now, so that a dump that begins now reads as the whole run
 * would.
 *
 * It is shown every line the writer writes (trace_writer.h's tap) and keeps
 * a line's text while the line matters: names, devices, PyTorch's
 * attach and stacks and settings (not the meta: the flight recorder
 * writes it first in every dump); every live block, segment, allocation and
 * pool; the ranges and the step each live block and allocation was made in
 * (every range open in the process then, so the analysis gives it the
 * layer, phase and step it gave it in the full trace); the ranges open now
 * and the current step; the tensor and segment names of live memory; each
 * counter's last value. Replayed in the order they were written, those
 * lines, after the meta, are a subsequence of the trace that the analysis reads to the same
 * state as the whole: the blocks alive now, each attributed as when it was
 * made, hours ago or not. What it lets go is freed at once: its memory is
 * bounded by what is alive (TRACE_FORMAT.md, "Flight recorder").
 *
 * Writer thread only; never prints. */
#ifndef GPUPROF_WINDOW_HEAD_H
#define GPUPROF_WINDOW_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "trace_writer.h"

struct gp_window_head;

struct gp_wh_stats {
	uint64_t lines;      /* kept now */
	uint64_t bytes;      /* their text */
	uint64_t live;       /* blocks, segments and allocations alive */
	uint64_t ranges;     /* ranges kept (open, or a live block's) */
	uint64_t contexts;   /* distinct moments live blocks were made in */
	uint64_t left_out;   /* lines not kept for want of memory or room */
};

/* max_bytes: the kept text at most; past it lines are left out (counted).
 * 0 or -ENOMEM. */
int gp_wh_new(struct gp_window_head **out, size_t max_bytes);
/* The writer's tap (gp_tw_tap_fn): ctx is the window head. */
void gp_wh_observe(void *ctx, const struct gp_tw_event *ev);
/* Calls fn(fn_ctx, line, len) for each kept line, in the order written
 * (lines without ",\n"); stops at fn's first non-zero return and returns
 * it. 0 or that, or -ENOMEM. */
typedef int (*gp_wh_line_fn)(void *fn_ctx, const char *line, size_t len);
int gp_wh_replay(struct gp_window_head *wh, gp_wh_line_fn fn, void *fn_ctx);
void gp_wh_stats(const struct gp_window_head *wh, struct gp_wh_stats *st);
/* Safe on NULL. */
void gp_wh_free(struct gp_window_head *wh);

#endif
