/* The flight recorder's outline of the run (gpuprof.outline events): for
 * each step, each second outside steps, and each device, the peaks of
 * allocated, reserved and device memory, what held allocated at its peak
 * by category and by layer, and the failed allocations. The ring lets the
 * run's events go; the outline of all of it stays (TRACE_FORMAT.md,
 * "Flight recorder").
 *
 * It is shown every line the writer writes (trace_writer.h's tap) and keeps
 * the live blocks (address, size, what they were made for) and, per
 * device, the bytes alive by (layer, category); at the first free after
 * allocated rose to a new most in the stretch it copies those totals: the
 * holders at the peak, exactly as they were.
 *
 * A block's layer and category follow the analysis (viewer/analyze/
 * CATEGORIES.md) as far as they are known when the stretch ends: the layer
 * is the innermost fwd: range on the allocating thread, rooted at its
 * outermost, else its bwd: range's module; the category: named by a
 * gpuprof:torch.param mark: parameters; made in backward: gradients; in optimizer.step: optimizer state; in
 * zero_grad: other; in a forward: activations; freed, before the stretch
 * ended, inside the range (or the backward or optimizer phase) it was made
 * in: temporaries; else other. A block made before the first forward is
 * a parameter where a forward ran before the stretch ended, else other
 * (a program without modules). What the analysis learns only later is not
 * known here.
 *
 * Times are the latest ts of the lines seen so far: the writer's lines come
 * a little out of time order, and a stretch's begin, peak and end keep
 * theirs.
 *
 * Memory: the live blocks, the layers' names (at most GP_OUTLINE_MAX_LAYERS,
 * then "(other layers)") and two totals per (layer, category) and device.
 * Writer thread only; never prints. */
#ifndef GPUPROF_OUTLINE_H
#define GPUPROF_OUTLINE_H

#include <stddef.h>
#include <stdint.h>

#include "trace_writer.h"

#define GP_OUTLINE_LAYERS 8         /* layers a record names, the rest summed */
#define GP_OUTLINE_MAX_LAYERS 2048  /* layers told apart */
#define GP_OUTLINE_MAX_DEVICES 16
#define GP_OUTLINE_CATS 7
/* A stretch outside steps closes after this */
#define GP_OUTLINE_SECOND_NS 1000000000ll
/* Steps stopped coming this long ago: outside steps again */
#define GP_OUTLINE_STEP_GAP_NS 60000000000ll

/* The analysis' names (viewer/analyze/model/classify.c) */
extern const char *const gp_outline_cat_names[GP_OUTLINE_CATS];

enum gp_outline_closed { GP_OUTLINE_BY_STEP, GP_OUTLINE_BY_SECOND, GP_OUTLINE_BY_END };
extern const char *const gp_outline_closed_names[3];

struct gp_outline_holder {
	const char *name; /* borrowed: the outline's, until gp_outline_free */
	uint64_t bytes;
};

/* One stretch of one device (GP_ARG(OUTLINE, ...) says what each is) */
struct gp_outline_rec {
	uint32_t device;
	uint64_t step;
	int closed_by;
	int64_t begin_ns, end_ns, peak_ns;
	uint64_t allocated_peak, reserved_peak, device_peak;
	uint64_t allocated, reserved, device_bytes, live;
	uint64_t ooms, oom_bytes;
	size_t ncat, nlayer;
	struct gp_outline_holder cat[GP_OUTLINE_CATS];      /* largest first */
	struct gp_outline_holder layer[GP_OUTLINE_LAYERS + 1];
};

struct gp_outline_stats {
	uint64_t records;    /* closed so far */
	uint64_t blocks;     /* live blocks and allocations kept */
	uint64_t layers;
	uint64_t bytes;      /* the outline's memory, about */
	uint64_t left_out;   /* blocks not kept for want of memory */
};

struct gp_outline;

/* 0 or -ENOMEM. */
int gp_outline_new(struct gp_outline **out);
/* The writer's tap (gp_tw_tap_fn): ctx is the outline. */
void gp_outline_observe(void *ctx, const struct gp_tw_event *ev);
/* Time passes (ts_ns: the trace's clock): outside steps, a stretch closes
 * each second. */
void gp_outline_tick(struct gp_outline *o, int64_t ts_ns);
/* The end: every device's stretch closes. */
void gp_outline_end(struct gp_outline *o, int64_t ts_ns);
/* N of a step:N mark's name (1 to 18 digits), 0 for any other name: the
 * one reading of the marks, the flight recorder's too. */
uint64_t gp_outline_step_mark(const struct gp_tw_event *ev);
/* The device memory the process holds on device now: PyTorch's reserved
 * or CUDA's device allocations, the larger; *total: the device's size
 * (gpuprof.device), 0 while not known. */
uint64_t gp_outline_held(const struct gp_outline *o, unsigned device, uint64_t *total);
/* The oldest closed record not taken yet into *rec: 1, or 0 for none. */
int gp_outline_next(struct gp_outline *o, struct gp_outline_rec *rec);
/* Begins r's gpuprof.outline event in tw (pid: the process's), with the
 * ring's counts of what it let go so far; the caller ends it (gp_tw_end or
 * gp_tw_take). */
void gp_outline_format(struct gp_trace_writer *tw, int64_t pid, const struct gp_outline_rec *r,
		       uint64_t dropped_segments, uint64_t dropped_bytes);
void gp_outline_stats(const struct gp_outline *o, struct gp_outline_stats *st);
/* Safe on NULL. */
void gp_outline_free(struct gp_outline *o);

#endif
