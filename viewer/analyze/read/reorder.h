/* Puts a trace's events back in time order with a bounded window.
 *
 * The recorder writes events as CUPTI hands them over, out of order, and
 * says with each gpuprof.watermark line that nothing older than it is still
 * to come. Events wait in a 4-ary min-heap on (ts, arrival) and leave once the
 * horizon passes them: the watermark AN_WM_MARGIN watermarks back (a
 * margin of flushes: the API call that made an allocation must have been
 * read too, see corr.h, and CUPTI can hand over a thread's records later
 * than the recorder's watermark promised: seen on an H200 while a
 * cudaMallocAsync of 23 GiB ran for 45 ms, 108 records one flush late),
 * or, in a trace without watermarks, the newest ts seen minus
 * AN_WINDOW_NS. The heap never holds more than AN_WINDOW_MAX events: past
 * that the oldest leave early. An event that arrives older than what has
 * left is "late": it still goes through, and is counted. */
#ifndef GPUPROF_AN_REORDER_H
#define GPUPROF_AN_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define AN_WINDOW_NS (2ll * 1000 * 1000 * 1000)
#define AN_WINDOW_MAX (1u << 20)
#define AN_WM_MARGIN 3

struct an_heap_ent {
	int64_t ts;
	uint64_t seq;
	uint32_t idx;
};

struct an_reorder {
	struct an_heap_ent *heap;
	size_t n, cap;
	struct an_ev *slab; /* event bodies, indexed by idx */
	uint32_t *free_idx; /* unused slab slots */
	size_t n_free, slab_cap;
	uint64_t seq;
	int64_t horizon;    /* events older than this may leave */
	int64_t released;   /* ts of the last event that left */
	int64_t newest;     /* largest ts seen */
	int64_t wm[AN_WM_MARGIN]; /* the last watermarks, not yet the horizon */
	unsigned n_wm;      /* how many of wm[] are set (0: no watermark yet); the newest is last */
	int have_released;
	uint64_t late;      /* arrived older than what had left */
	uint64_t overflow;  /* left early because the heap was full */
	size_t max_n;       /* most events held at once */
};

void an_reorder_init(struct an_reorder *r);
void an_reorder_free(struct an_reorder *r);
/* Takes ev (and its name reference). 0 or -ENOMEM. */
int an_reorder_push(struct an_reorder *r, const struct an_ev *ev);
void an_reorder_watermark(struct an_reorder *r, int64_t ts);
/* The oldest event if it may leave (all = 1: at the end of the trace,
 * everything may). 1: *out filled; 0: nothing may leave yet. */
int an_reorder_pop(struct an_reorder *r, int all, struct an_ev *out);
/* ts of the oldest event held; 0 if none (check r->n). */
static inline int64_t an_reorder_top_ts(const struct an_reorder *r)
{
	return r->n ? r->heap[0].ts : 0;
}

#endif
