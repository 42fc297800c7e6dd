/* The reorder window as it was first written (a 4-ary heap of every event
 * held), kept as the reference test_reorder.c holds the window to. */
#include <stddef.h>
#include <stdint.h>



struct ref_heap_ent {
	int64_t ts;
	uint64_t seq;
	uint32_t idx;
};

struct ref_reorder {
	struct ref_heap_ent *heap;
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

static void ref_reorder_init(struct ref_reorder *r)
{
	memset(r, 0, sizeof(*r));
	r->horizon = INT64_MIN;
	r->newest = INT64_MIN;
}

static void ref_reorder_free(struct ref_reorder *r)
{
	free(r->heap);
	free(r->slab);
	free(r->free_idx);
	memset(r, 0, sizeof(*r));
}

static inline int ref_before(const struct ref_heap_ent *a, const struct ref_heap_ent *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

static int ref_grow(struct ref_reorder *r)
{
	size_t cap = r->cap ? r->cap * 2 : 1024;
	struct ref_heap_ent *h = realloc(r->heap, cap * sizeof(*h));
	struct an_ev *slab;
	uint32_t *fi;

	if (!h)
		return -ENOMEM;
	r->heap = h;
	slab = realloc(r->slab, cap * sizeof(*slab));
	if (!slab)
		return -ENOMEM;
	r->slab = slab;
	fi = realloc(r->free_idx, cap * sizeof(*fi));
	if (!fi)
		return -ENOMEM;
	r->free_idx = fi;
	/* the new slab slots are free */
	for (size_t i = cap; i > r->cap; i--)
		r->free_idx[r->n_free++] = (uint32_t)(i - 1);
	r->cap = cap;
	return 0;
}

static int ref_reorder_push(struct ref_reorder *r, const struct an_ev *ev)
{
	struct ref_heap_ent e;
	size_t i;

	if (r->n_free == 0) {
		int err = ref_grow(r);

		if (err)
			return err;
	}
	e.ts = ev->ts;
	e.seq = r->seq++;
	e.idx = r->free_idx[--r->n_free];
	r->slab[e.idx] = *ev;
	if (r->have_released && ev->ts < r->released)
		r->late++;
	if (ev->ts > r->newest)
		r->newest = ev->ts;
	/* sift up; a 4-ary heap: half the levels of a binary one, and the
	 * children of a node share a cache line or two */
	i = r->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 4;

		if (!ref_before(&e, &r->heap[parent]))
			break;
		r->heap[i] = r->heap[parent];
		i = parent;
	}
	r->heap[i] = e;
	if (r->n > r->max_n)
		r->max_n = r->n;
	return 0;
}

static void ref_reorder_watermark(struct ref_reorder *r, int64_t ts)
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

static int ref_reorder_pop(struct ref_reorder *r, int all, struct an_ev *out)
{
	struct ref_heap_ent top, last;
	size_t i, n;

	if (r->n == 0)
		return 0;
	top = r->heap[0];
	if (!all && r->n < AN_WINDOW_MAX) {
		int64_t h = r->horizon;

		if (!r->n_wm && r->newest - AN_WINDOW_NS > h)
			h = r->newest - AN_WINDOW_NS;
		if (top.ts >= h)
			return 0;
	} else if (!all) {
		r->overflow++;
	}
	*out = r->slab[top.idx];
	r->free_idx[r->n_free++] = top.idx;
	if (!r->have_released || top.ts > r->released)
		r->released = top.ts;
	r->have_released = 1;
	/* sift down the last entry from the root */
	last = r->heap[--r->n];
	n = r->n;
	i = 0;
	for (;;) {
		size_t c = 4 * i + 1, lim = c + 4 < n ? c + 4 : n;

		if (c >= n)
			break;
		for (size_t k = c + 1; k < lim; k++)
			if (ref_before(&r->heap[k], &r->heap[c]))
				c = k;
		if (!ref_before(&r->heap[c], &last))
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (n)
		r->heap[i] = last;
	return 1;
}
