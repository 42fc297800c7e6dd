/* The flight recorder's outline of the run (gpuprof.outline events,
 * TRACE_FORMAT.md "Flight recorder"), kept per device as it is read: the
 * whole run's step points (for the leak and growth fits: the trace's full
 * events cover only its last window), its peaks, the holders at the run's
 * peak, failed allocations, what the ring let go. */
#ifndef GPUPROF_AN_OUTLINE_H
#define GPUPROF_AN_OUTLINE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "step_series.h"
#include "strtab.h"

#define AN_OUTLINE_HOLDERS 16 /* holders kept, by category and by layer */

/* One stretch, as read (closed_by: 0 step, 1 second, 2 end) */
struct an_outline_rec {
	uint32_t device;
	uint64_t step;
	int closed_by;
	int64_t begin_ns, end_ns, peak_ns;
	uint64_t allocated_peak, reserved_peak, device_peak;
	uint64_t allocated, reserved, device_bytes, live;
	uint64_t ooms, oom_bytes, dropped_segments, dropped_bytes;
};

struct an_outline_holder {
	struct an_str *name; /* a reference */
	uint64_t bytes;
};

struct an_outline_dev {
	uint64_t records, steps;          /* steps: records closed by a step mark */
	uint64_t first_step, last_step;   /* of those, 0: none */
	int64_t begin_ns, end_ns;         /* what the records cover */
	/* the run's most of allocated (first reached), its stretch */
	uint64_t allocated_peak, peak_step;
	int64_t peak_ns;
	int peak_closed_by;
	uint64_t reserved_peak, device_peak;
	uint64_t ooms, oom_bytes, first_oom_step;
	int64_t first_oom_ns;
	uint64_t dropped_segments, dropped_bytes;
	size_t ncat, nlayer;
	struct an_outline_holder cat[AN_OUTLINE_HOLDERS], layer[AN_OUTLINE_HOLDERS];
	/* the step points, as the step marks' series (step_series.h): fw is
	 * allocated at the mark, total the process's device memory */
	struct an_step_pt pts[AN_MAX_SERIES];
	size_t npts;
	uint32_t stride;
	uint64_t marks;
};

struct an_outline {
	struct an_outline_dev *dev[AN_MAX_DEVICES]; /* NULL: no record */
};

/* Adds a record; by_category and by_layer: the raw JSON objects (checked:
 * {name: bytes}), read only where the record holds the run's new peak.
 * 0, -ENOMEM, or -EINVAL with why. */
int an_outline_add(struct an_outline *o, struct an_strtab *st, const struct an_outline_rec *r,
		   const char *by_category, size_t cat_len, const char *by_layer, size_t layer_len,
		   char *why, size_t cap);
void an_outline_free(struct an_outline *o, struct an_strtab *st);

#endif
