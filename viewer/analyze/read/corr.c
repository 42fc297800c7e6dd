/* corr -> API call table, see corr.h. */
#include "corr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void an_corr_init(struct an_corr *m)
{
	memset(m, 0, sizeof(*m));
}

void an_corr_free(struct an_corr *m, struct an_strtab *st)
{
	for (unsigned i = 0; i < m->nqueue; i++)
		an_str_unref(st, m->queue[i].api);
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].corr)
			an_str_unref(st, m->slots[i].api);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* Doubles the table; entries that would collide keep the newer call. */
static int grow(struct an_corr *m, struct an_strtab *st)
{
	size_t cap = m->cap ? m->cap * 2 : 4096;
	struct an_corr_ent *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		struct an_corr_ent *e = &m->slots[i], *d;

		if (!e->corr)
			continue;
		d = &slots[e->corr & (cap - 1)];
		if (d->corr && d->corr > e->corr) {
			an_str_unref(st, e->api);
			continue;
		}
		if (d->corr)
			an_str_unref(st, d->api);
		*d = *e;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

static int put_now(struct an_corr *m, struct an_strtab *st, uint64_t corr, int64_t tid,
		   int64_t end, struct an_str *api, int64_t horizon)
{
	struct an_corr_ent *e;

	for (;;) {
		if (!m->cap && grow(m, st)) {
			an_str_unref(st, api);
			return -ENOMEM;
		}
		e = &m->slots[corr & (m->cap - 1)];
		/* free, the same id again, or an old call whose events have left */
		if (!e->corr || e->corr == corr || e->end < horizon)
			break;
		if (m->cap >= AN_CORR_MAX) {
			m->dropped++;
			break;
		}
		if (grow(m, st)) {
			an_str_unref(st, api);
			return -ENOMEM;
		}
	}
	if (e->corr)
		an_str_unref(st, e->api);
	e->corr = corr;
	e->tid = tid;
	e->end = end;
	e->api = api;
	return 0;
}

int an_corr_flush(struct an_corr *m, struct an_strtab *st)
{
	int r = 0;

	for (unsigned i = 0; i < m->nqueue; i++) {
		const struct an_corr_put *q = &m->queue[i];

		if (r)
			an_str_unref(st, q->api);
		else
			r = put_now(m, st, q->corr, q->tid, q->end, q->api, q->horizon);
	}
	m->nqueue = 0;
	return r;
}

int an_corr_put(struct an_corr *m, struct an_strtab *st, uint64_t corr, int64_t tid,
		int64_t end, struct an_str *api, int64_t horizon)
{
	if (!corr) {
		an_str_unref(st, api);
		return 0;
	}
	if (m->cap)
		__builtin_prefetch(&m->slots[corr & (m->cap - 1)], 1);
	m->queue[m->nqueue++] = (struct an_corr_put){ corr, tid, end, horizon, api };
	return m->nqueue == AN_CORR_QUEUE ? an_corr_flush(m, st) : 0;
}
