/* Correlation id -> the CUDA API call that made an allocation or free: its
 * thread (which gives the NVTX ranges, so the layer) and its name. API calls
 * are put in when read, looked up when their memory event leaves the
 * reorder window.
 *
 * CUPTI numbers calls in increasing order, so a table indexed by the id's
 * low bits holds the recent ones without hashing: a new call takes the slot
 * of an old one once the reorder window has passed the old call's end (its
 * memory events, inside the call, have left by then), else the table
 * doubles. It thus holds about one window of calls; past AN_CORR_MAX slots
 * an old call is dropped anyway (its allocation then counts as
 * unattributed). */
#ifndef GPUPROF_AN_CORR_H
#define GPUPROF_AN_CORR_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

#define AN_CORR_MAX (1u << 20)

struct an_corr_ent {
	uint64_t corr; /* 0: empty slot */
	int64_t tid;
	int64_t end;   /* ts + dur, ns */
	struct an_str *api;
};

/* Puts wait in a short queue, their slots asked of the cache meanwhile: API
 * calls come shuffled within a flush, so a put's slot is a cache miss. */
#define AN_CORR_QUEUE 16

struct an_corr_put {
	uint64_t corr;
	int64_t tid, end, horizon;
	struct an_str *api;
};

struct an_corr {
	struct an_corr_ent *slots;
	size_t cap;      /* power of two */
	uint64_t dropped; /* calls pushed out while still needed */
	struct an_corr_put queue[AN_CORR_QUEUE]; /* puts not yet made, oldest first */
	unsigned nqueue;
};

void an_corr_init(struct an_corr *m);
void an_corr_free(struct an_corr *m, struct an_strtab *st);
/* Takes the api reference. horizon: events older than it have left the
 * reorder window. 0 or -ENOMEM. corr 0 is not stored. The put may wait in
 * the queue: an_corr_flush() before the next an_corr_get(). */
int an_corr_put(struct an_corr *m, struct an_strtab *st, uint64_t corr, int64_t tid,
		int64_t end, struct an_str *api, int64_t horizon);
/* Makes the queued puts, in order, as they would have been made at once.
 * 0 or -ENOMEM (the queue emptied either way). */
int an_corr_flush(struct an_corr *m, struct an_strtab *st);

static inline const struct an_corr_ent *an_corr_get(const struct an_corr *m, uint64_t corr)
{
	const struct an_corr_ent *e;

	if (!m->cap || !corr)
		return NULL;
	e = &m->slots[corr & (m->cap - 1)];
	return e->corr == corr ? e : NULL;
}

#endif
