/* Puts a trace's events back in time order with a bounded window.
 *
 * The recorder writes events as CUPTI hands them over, out of order, and
 * says with each gpuprof.watermark line that nothing older than it is still
 * to come. Events wait and leave in (ts, arrival) order once the horizon
 * passes them: the watermark AN_WM_MARGIN watermarks back (a margin of
 * flushes: the API call that made an allocation must have been read too,
 * see corr.h, and CUPTI can hand over a thread's records later than the
 * recorder's watermark promised: seen on an H200 while a cudaMallocAsync of
 * 23 GiB ran for 45 ms, 108 records one flush late), or, in a trace without
 * watermarks, the newest ts seen minus AN_WINDOW_NS. The window never holds
 * more than AN_WINDOW_MAX events: past that the oldest leave early. An event
 * that arrives older than what has left is "late": it still goes through,
 * and is counted.
 *
 * How: the horizon moves in steps (a watermark holds tens of thousands of
 * events), so events wait unsorted in `pending`, all at or past `cut`; when
 * the horizon passes cut, those before it are moved out in one sweep and
 * sorted at once (a stable radix sort on ts, so ties keep their arrival
 * order) into `ready`, whose front leaves first. An event that arrives
 * before cut (rare: late, or far behind the newest) waits in a small heap
 * on (ts, arrival) beside ready. */
#ifndef GPUPROF_AN_REORDER_H
#define GPUPROF_AN_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define AN_WINDOW_NS (2ll * 1000 * 1000 * 1000)
#define AN_WINDOW_MAX (1u << 20)
#define AN_WM_MARGIN 3

/* An event waiting in pending or ready: its ts and its slab slot. */
struct an_ro_ent {
	int64_t ts;
	uint64_t idx;
};

/* An event waiting in the heap of those that came before cut. */
struct an_heap_ent {
	int64_t ts;
	uint64_t seq;
	uint32_t idx;
};

struct an_reorder {
	struct an_ev *slab; /* event bodies, indexed by idx */
	uint32_t *free_idx; /* unused slab slots */
	size_t n_free, cap; /* cap: slab slots */
	size_t n;           /* events held */
	struct an_ro_ent *pending; /* unsorted, all ts >= cut */
	size_t n_pending, pending_cap;
	struct an_ro_ent *ready, *tmp; /* sorted; ready[ready_head..n_ready) wait */
	size_t ready_head, n_ready, ready_cap;
	struct an_heap_ent *heap; /* came before cut */
	size_t n_heap, heap_cap;
	int64_t cut;
	uint64_t seq;
	int64_t horizon;    /* events older than this may leave */
	int64_t released;   /* ts of the last event that left */
	int64_t newest;     /* largest ts seen */
	int64_t wm[AN_WM_MARGIN]; /* the last watermarks, not yet the horizon */
	unsigned n_wm;      /* how many of wm[] are set (0: no watermark yet); the newest is last */
	int have_released;
	uint64_t late;      /* arrived older than what had left */
	uint64_t overflow;  /* left early because the window was full */
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

#endif
