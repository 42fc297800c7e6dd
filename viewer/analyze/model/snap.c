/* Allocation records and snapshots of what was alive (state.h, struct
 * an_snap): what the peak, the failed allocations, the step boundary and
 * the moments (moments.c) keep. */
#include <errno.h>
#include <stdlib.h>

#include "state.h"

void an_rec_unref(struct an_analysis *a, struct an_rec *r)
{
	if (!r || --r->ref > 0)
		return;
	an_str_unref(&a->st, r->layer);
	an_str_unref(&a->st, r->op);
	an_str_unref(&a->st, r->api);
	an_str_unref(&a->st, r->library);
	an_str_unref(&a->st, r->api_library);
	free(r);
}

void an_snap_clear(struct an_analysis *a, struct an_snap *s)
{
	for (size_t i = 0; i < s->n; i++)
		an_rec_unref(a, s->stash[i]);
	s->n = 0;
}

void an_snap_free(struct an_analysis *a, struct an_snap *s)
{
	an_snap_clear(a, s);
	free(s->stash);
	s->stash = NULL;
	s->cap = 0;
}

int an_snap_keep(struct an_snap *s, struct an_rec *r)
{
	if (!s->taken || r->seq > s->cut)
		return 0; /* made after the snapshot: not in it */
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct an_rec **st = realloc(s->stash, cap * sizeof(*st));

		if (!st)
			return -ENOMEM;
		s->stash = st;
		s->cap = cap;
	}
	s->stash[s->n++] = r;
	r->ref++;
	return 0;
}

void an_snap_take(struct an_analysis *a, struct an_snap *s)
{
	an_snap_clear(a, s);
	s->taken = 1;
	s->cut = a->seq;
}

struct an_rec **an_snap_members(struct an_pd *pd, const struct an_snap *s, size_t *n, int *oom)
{
	size_t cap = s->n + pd->live.count, k = 0;
	struct an_rec **out;

	*n = 0;
	*oom = 0;
	if (!s->taken || cap == 0)
		return NULL;
	out = malloc(cap * sizeof(*out));
	if (!out) {
		*oom = 1;
		return NULL;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->stash[i]->flags & R_DEVICE)
			out[k++] = s->stash[i];
	for (size_t i = 0; i < pd->live.cap; i++) {
		struct an_rec *r = pd->live.slots[i].val;

		if (r && r->seq <= s->cut && (r->flags & R_DEVICE))
			out[k++] = r;
	}
	*n = k;
	return out;
}
