/* PyTorch's allocator history in a native-mode trace (--torch-history): the
 * `gpuprof:torch.history` marks the hooks write at exit, each holding
 * PyTorch's allocated and reserved bytes of one device after every
 * allocation, free and segment change (exporters/TRACE_FORMAT.md). The marks
 * come last in the trace, long after the moments they describe, so the
 * source collects them in a first pass (an_history_add, in any order),
 * an_history_finish puts them together, and analyze.c feeds the points into
 * the second pass in time order with the events. */
#ifndef GPUPROF_AN_HISTORY_H
#define GPUPROF_AN_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "exporters/torch_marks.h"

#define AN_HIST_PREFIX GP_TORCH_HISTORY_PREFIX
#define AN_HIST_MAX_POINTS (1u << 24)

struct an_hist_pt {
	int64_t ts;         /* ns from the trace's ts_base_ns (time_us until finished) */
	uint64_t allocated; /* PyTorch's requested bytes */
	uint64_t reserved;  /* its segments */
	uint32_t device;
	uint32_t seq;       /* its place in the history, for equal times */
};

struct an_hist_mark {
	uint32_t device, part;
	int last, complete;
	size_t first, n;    /* its points in pt[] as read */
	int64_t mark_ts;    /* the mark's own ts */
	int64_t off;        /* what turns its time_us into a ts */
	int64_t t_first, t_last; /* time_us of its first and last point */
};

struct an_history {
	struct an_hist_pt *pt; /* owned */
	size_t n, cap;
	struct an_hist_mark *marks; /* owned; freed by an_history_finish */
	size_t nmarks, marks_cap;
	size_t next;           /* pass 2: the next point to feed */
	uint64_t devices;      /* bit d: device d has points */
	uint64_t complete;     /* bit d: its history covers the whole run */
	uint64_t ended;        /* bit d: its last part was read */
	uint64_t gaps;         /* bit d: parts of it are missing */
	int64_t first_ts[AN_MAX_DEVICES]; /* ts of the device's first point */
};

/* Adds one mark: json is the text after AN_HIST_PREFIX, mark_ts the mark's
 * own ts (from ts_base_ns). 0; -EINVAL with why filled (what is wrong with
 * the mark, for a "bad input" line); -ENOMEM. */
int an_history_add(struct an_history *h, const char *json, size_t n, int64_t mark_ts, char *why,
		   size_t whycap);
/* Puts the marks of each device in order, checks that they hold together,
 * places the points on the trace's clock and sorts them by time. 0; -EINVAL
 * with why filled; -ENOMEM. */
int an_history_finish(struct an_history *h, char *why, size_t whycap);
void an_history_free(struct an_history *h);

#endif
