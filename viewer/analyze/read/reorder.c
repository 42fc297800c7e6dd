/* Bounded reorder window on ts, see reorder.h. */
#include "reorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* In a trace without watermarks the horizon moves with every newer event:
 * what is moved to ready reaches this far past it, so that a sweep of
 * pending comes once per eighth of a window, not once per event. */
#define NO_WM_SLACK (AN_WINDOW_NS / 8)
/* how many events of ready ahead a pop asks the cache for */
#define PREFETCH_AHEAD 8

void an_reorder_init(struct an_reorder *r)
{
	memset(r, 0, sizeof(*r));
	r->horizon = INT64_MIN;
	r->newest = INT64_MIN;
	r->cut = INT64_MIN;
}

void an_reorder_free(struct an_reorder *r)
{
	free(r->slab);
	free(r->free_idx);
	free(r->pending);
	free(r->ready);
	free(r->tmp);
	free(r->heap);
	memset(r, 0, sizeof(*r));
}

/* More slab slots; pending, ready and tmp hold at most every event held, so
 * they grow with it and a pop never allocates. */
static int grow(struct an_reorder *r)
{
	size_t cap = r->cap ? r->cap * 2 : 1024;
	struct an_ev *slab = realloc(r->slab, cap * sizeof(*slab));
	uint32_t *fi;
	struct an_ro_ent *e;

	if (!slab)
		return -ENOMEM;
	r->slab = slab;
	if (!(fi = realloc(r->free_idx, cap * sizeof(*fi))))
		return -ENOMEM;
	r->free_idx = fi;
	if (!(e = realloc(r->pending, cap * sizeof(*e))))
		return -ENOMEM;
	r->pending = e;
	if (!(e = realloc(r->ready, cap * sizeof(*e))))
		return -ENOMEM;
	r->ready = e;
	if (!(e = realloc(r->tmp, cap * sizeof(*e))))
		return -ENOMEM;
	r->tmp = e;
	/* the new slab slots are free */
	for (size_t i = cap; i > r->cap; i--)
		r->free_idx[r->n_free++] = (uint32_t)(i - 1);
	r->cap = cap;
	return 0;
}

static inline int heap_before(const struct an_heap_ent *a, const struct an_heap_ent *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

/* A 4-ary min-heap: half the levels of a binary one, and the children of a
 * node share a cache line or two. */
static int heap_push(struct an_reorder *r, struct an_heap_ent e)
{
	size_t i;

	if (r->n_heap == r->heap_cap) {
		size_t cap = r->heap_cap ? r->heap_cap * 2 : 256;
		struct an_heap_ent *h = realloc(r->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		r->heap = h;
		r->heap_cap = cap;
	}
	i = r->n_heap++;
	while (i > 0) {
		size_t parent = (i - 1) / 4;

		if (!heap_before(&e, &r->heap[parent]))
			break;
		r->heap[i] = r->heap[parent];
		i = parent;
	}
	r->heap[i] = e;
	return 0;
}

static void heap_pop(struct an_reorder *r)
{
	struct an_heap_ent last = r->heap[--r->n_heap];
	size_t i = 0, n = r->n_heap;

	for (;;) {
		size_t c = 4 * i + 1, lim = c + 4 < n ? c + 4 : n;

		if (c >= n)
			break;
		for (size_t k = c + 1; k < lim; k++)
			if (heap_before(&r->heap[k], &r->heap[c]))
				c = k;
		if (!heap_before(&r->heap[c], &last))
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (n)
		r->heap[i] = last;
}

int an_reorder_push(struct an_reorder *r, const struct an_ev *ev)
{
	uint32_t idx;

	if (r->n_free == 0) {
		int err = grow(r);

		if (err)
			return err;
	}
	if (ev->ts < r->cut) {
		struct an_heap_ent e = { .ts = ev->ts, .seq = r->seq, .idx = r->free_idx[r->n_free - 1] };

		if (heap_push(r, e))
			return -ENOMEM;
	} else {
		r->pending[r->n_pending++] = (struct an_ro_ent){ ev->ts, r->free_idx[r->n_free - 1] };
	}
	r->seq++;
	idx = r->free_idx[--r->n_free];
	r->slab[idx] = *ev;
	if (r->have_released && ev->ts < r->released)
		r->late++;
	if (ev->ts > r->newest)
		r->newest = ev->ts;
	if (++r->n > r->max_n)
		r->max_n = r->n;
	return 0;
}

void an_reorder_watermark(struct an_reorder *r, int64_t ts)
{
	/* AN_WM_MARGIN watermarks of margin: see reorder.h */
	if (r->n_wm && ts <= r->wm[r->n_wm - 1])
		return;
	if (r->n_wm == AN_WM_MARGIN) {
		if (r->wm[0] > r->horizon)
			r->horizon = r->wm[0];
		memmove(r->wm, r->wm + 1, (AN_WM_MARGIN - 1) * sizeof(r->wm[0]));
		r->n_wm--;
	}
	r->wm[r->n_wm++] = ts;
}

/* Sorts ready[0..n) on ts, stably (equal ts keep their order), given their
 * least and largest ts: a radix sort of 11 bits a pass on ts - lo. */
static void sort_ready(struct an_reorder *r, size_t n, int64_t lo, int64_t hi)
{
	enum { BITS = 11, BUCKETS = 1 << BITS };
	uint64_t span = (uint64_t)hi - (uint64_t)lo;
	size_t count[BUCKETS];

	if (n < 32) {
		for (size_t i = 1; i < n; i++) {
			struct an_ro_ent e = r->ready[i];
			size_t j = i;

			for (; j > 0 && r->ready[j - 1].ts > e.ts; j--)
				r->ready[j] = r->ready[j - 1];
			r->ready[j] = e;
		}
		return;
	}
	for (unsigned shift = 0; shift < 64 && (span >> shift) != 0; shift += BITS) {
		struct an_ro_ent *src = r->ready, *dst = r->tmp;
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(((uint64_t)src[i].ts - (uint64_t)lo) >> shift) & (BUCKETS - 1)]++;
		for (size_t b = 0; b < BUCKETS; b++) {
			size_t c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(((uint64_t)src[i].ts - (uint64_t)lo) >> shift) & (BUCKETS - 1)]++] = src[i];
		r->ready = dst;
		r->tmp = src;
	}
}

/* Moves the pending events before cut to ready (empty), in ts order. */
static void sweep(struct an_reorder *r, int64_t cut)
{
	size_t keep = 0, n = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN, prev = INT64_MIN;
	int sorted = 1;

	for (size_t i = 0; i < r->n_pending; i++) {
		struct an_ro_ent e = r->pending[i];

		if (e.ts < cut) {
			r->ready[n++] = e;
			if (e.ts < prev)
				sorted = 0;
			prev = e.ts;
			lo = e.ts < lo ? e.ts : lo;
			hi = e.ts > hi ? e.ts : hi;
		} else {
			r->pending[keep++] = e;
		}
	}
	r->n_pending = keep;
	r->ready_head = 0;
	r->n_ready = n;
	r->cut = cut;
	if (!sorted)
		sort_ready(r, n, lo, hi);
}

/* The horizon now: events before it may leave. */
static int64_t horizon(const struct an_reorder *r)
{
	int64_t h = r->horizon;

	if (!r->n_wm && r->newest - AN_WINDOW_NS > h)
		h = r->newest - AN_WINDOW_NS;
	return h;
}

int an_reorder_pop(struct an_reorder *r, int all, struct an_ev *out)
{
	int64_t h = 0, ts;
	int any = all, from_heap;
	uint32_t idx;

	if (r->n == 0)
		return 0;
	if (!all && r->n < AN_WINDOW_MAX) {
		h = horizon(r);
	} else if (!all) {
		any = 1;
		r->overflow++;
	}
	/* pending holds only events at or past cut, ready and heap only
	 * events before it: the oldest is in ready or heap unless both are
	 * empty */
	if (r->ready_head == r->n_ready) {
		if (any) {
			if (!r->n_heap)
				sweep(r, INT64_MAX);
		} else if (h > r->cut) {
			int64_t cut = h;

			if (!r->n_wm)
				cut = h < INT64_MAX - NO_WM_SLACK ? h + NO_WM_SLACK : INT64_MAX;
			sweep(r, cut);
		} else if (!r->n_heap && r->cut == INT64_MAX) {
			/* everything left at once (window full): what comes
			 * next may wait in pending again */
			r->cut = h;
		}
	}
	if (r->ready_head < r->n_ready &&
	    (!r->n_heap || r->ready[r->ready_head].ts <= r->heap[0].ts)) {
		/* on equal ts ready's came first: what arrived after it came
		 * at or past a cut it had passed */
		ts = r->ready[r->ready_head].ts;
		idx = (uint32_t)r->ready[r->ready_head].idx;
		from_heap = 0;
	} else if (r->n_heap) {
		ts = r->heap[0].ts;
		idx = r->heap[0].idx;
		from_heap = 1;
	} else {
		return 0;
	}
	if (!any && ts >= h)
		return 0;
	if (from_heap) {
		heap_pop(r);
	} else {
		r->ready_head++;
		/* the slab is read out of order: ask for an event a few pops
		 * ahead now, so it is in the cache when its turn comes */
		if (r->ready_head + PREFETCH_AHEAD < r->n_ready) {
			const struct an_ev *next = &r->slab[r->ready[r->ready_head + PREFETCH_AHEAD].idx];

			__builtin_prefetch(next);
			__builtin_prefetch((const char *)next + sizeof(*next) - 1);
		}
	}
	*out = r->slab[idx];
	r->free_idx[r->n_free++] = idx;
	r->n--;
	if (!r->have_released || ts > r->released)
		r->released = ts;
	r->have_released = 1;
	return 1;
}
