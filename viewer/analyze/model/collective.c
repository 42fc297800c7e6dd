/* Collective calls around reported moments, see collective.h. */
#include "collective.h"

#include <string.h>

#include "state.h"

/* What follows "nccl" in the names of NCCL's ranges of collective calls. */
static const char *const call_ops[] = {
	"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Bcast", "Reduce", "Send", "Recv",
	"AllToAll", "AlltoAll", "Gather", "Scatter",
};

int an_coll_is_call(const struct an_str *name)
{
	size_t k = sizeof(GP_TR_COLL_PREFIX) - 1;

	if (!name || name->len <= k || memcmp(name->s, GP_TR_COLL_PREFIX, k) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(call_ops) / sizeof(call_ops[0]); i++)
		if (strcmp(name->s + k, call_ops[i]) == 0)
			return 1;
	return 0;
}

void an_coll_call_push(struct an_analysis *a, struct an_proc *p, int64_t tid, int64_t ts,
		       struct an_str *name)
{
	struct an_coll_calls *c = &p->coll_calls;
	struct an_coll_call *e = &c->v[c->next];

	an_str_unref(&a->st, e->name);
	*e = (struct an_coll_call){ an_str_ref(name), tid, ts, 0 };
	c->next = (c->next + 1) % AN_COLL_CALLS;
}

void an_coll_call_pop(struct an_proc *p, int64_t tid, const struct an_str *name, int64_t ts)
{
	struct an_coll_calls *c = &p->coll_calls;

	/* the newest open one of that thread: ranges nest */
	for (size_t k = 1; k <= AN_COLL_CALLS; k++) {
		struct an_coll_call *e = &c->v[(c->next + AN_COLL_CALLS - k) % AN_COLL_CALLS];

		if (e->name == name && e->tid == tid && !e->end) {
			e->end = ts;
			return;
		}
	}
}

void an_coll_calls_free(struct an_analysis *a, struct an_coll_calls *c)
{
	for (size_t i = 0; i < AN_COLL_CALLS; i++)
		an_str_unref(&a->st, c->v[i].name);
	memset(c, 0, sizeof(*c));
}

/* The call whose range holds a launch made by thread tid at ts: the
 * innermost (newest) such; NULL when none is kept. */
static struct an_str *call_of(const struct an_proc *p, int64_t tid, int64_t ts)
{
	const struct an_coll_calls *c = &p->coll_calls;

	for (size_t k = 1; k <= AN_COLL_CALLS; k++) {
		const struct an_coll_call *e = &c->v[(c->next + AN_COLL_CALLS - k) % AN_COLL_CALLS];

		if (e->name && e->tid == tid && e->start <= ts && (!e->end || ts <= e->end))
			return e->name;
	}
	return NULL;
}

static void coll_copy(struct an_coll *dst, const struct an_coll *src)
{
	*dst = *src;
	an_str_ref(dst->kernel);
	an_str_ref(dst->call);
}

static void coll_drop(struct an_analysis *a, struct an_coll *c)
{
	an_str_unref(&a->st, c->kernel);
	an_str_unref(&a->st, c->call);
	c->kernel = c->call = NULL;
}

/* A collective that left the running ones: the latest to end is kept. */
static void ended(struct an_analysis *a, struct an_coll_dev *d, struct an_coll *c)
{
	if (!d->has_last || c->end >= d->last.end) {
		if (d->has_last)
			coll_drop(a, &d->last);
		d->last = *c; /* its reference moves */
		d->has_last = 1;
		return;
	}
	coll_drop(a, c);
}

/* Those that ended by ts leave open[]. */
static void prune(struct an_analysis *a, struct an_coll_dev *d, int64_t ts)
{
	size_t k = 0;

	for (size_t i = 0; i < d->nopen; i++) {
		if (d->open[i].end <= ts)
			ended(a, d, &d->open[i]);
		else
			d->open[k++] = d->open[i];
	}
	d->nopen = k;
}

/* Outstanding at m: kept by launch, earliest first; the later ones past
 * AN_COLL_MAX are counted. */
static void during_add(struct an_coll_moment *m, const struct an_coll *c)
{
	size_t at = m->n;

	if (m->n == AN_COLL_MAX) {
		m->more++;
		return;
	}
	while (at > 0 && m->during[at - 1].launch > c->launch) {
		m->during[at] = m->during[at - 1];
		at--;
	}
	coll_copy(&m->during[at], c);
	m->n++;
}

/* A collective whose kernel started after m was taken. */
static void watch(struct an_analysis *a, struct an_coll_moment *m, const struct an_coll *c)
{
	if (!m->set)
		return;
	if (c->launch <= m->ts) {
		if (c->end > m->ts)
			during_add(m, c);
		return;
	}
	if (!m->has_after || c->launch < m->after.launch) {
		if (m->has_after)
			coll_drop(a, &m->after);
		coll_copy(&m->after, c);
		m->has_after = 1;
	}
}

void an_coll_event(struct an_analysis *a, struct an_pd *pd, const struct an_ev *ev, int64_t ts)
{
	struct an_coll_dev *d = &pd->coll;
	const struct an_corr_ent *call = an_source_api(pd->proc->src, ev->coll.corr);
	struct an_coll c = {
		.kernel = ev->name,
		.start = ts,
		.end = ts + ev->coll.duration,
		.launch = ts,
		.stream = ev->coll.stream,
	};

	/* the launch call, while the corr table still holds it (corr.h) */
	if (call) {
		int64_t end = pd->proc->src->ts_base_ns + call->end;

		c.launch_known = 1;
		c.tid = call->tid;
		/* a launch said to end after its kernel began is the clocks' noise */
		if (end < ts)
			c.launch = end;
		c.call = call_of(pd->proc, c.tid, end); /* borrowed: coll_copy takes its own */
	}
	d->count++;
	prune(a, d, ts);
	watch(a, &pd->peak_coll, &c);
	for (size_t i = 0; i < pd->nooms; i++)
		watch(a, &pd->ooms[i].coll, &c);
	if (d->nopen == AN_COLL_OPEN) {
		/* past AN_COLL_OPEN at once, the one ending first makes room:
		 * it is the likeliest to have ended before the moments still
		 * to come */
		size_t first = 0;

		for (size_t i = 1; i < d->nopen; i++)
			if (d->open[i].end < d->open[first].end)
				first = i;
		ended(a, d, &d->open[first]);
		d->open[first] = d->open[--d->nopen];
	}
	coll_copy(&d->open[d->nopen++], &c);
}

void an_coll_moment_free(struct an_analysis *a, struct an_coll_moment *m)
{
	for (size_t i = 0; i < m->n; i++)
		coll_drop(a, &m->during[i]);
	if (m->has_before)
		coll_drop(a, &m->before);
	if (m->has_after)
		coll_drop(a, &m->after);
	memset(m, 0, sizeof(*m));
}

void an_coll_take(struct an_analysis *a, struct an_pd *pd, struct an_coll_moment *m, int64_t ts)
{
	struct an_coll_dev *d = &pd->coll;

	an_coll_moment_free(a, m);
	m->set = 1;
	m->ts = ts;
	if (!d->count)
		return;
	prune(a, d, ts);
	for (size_t i = 0; i < d->nopen; i++)
		if (d->open[i].launch <= ts)
			during_add(m, &d->open[i]);
	if (d->has_last) {
		coll_copy(&m->before, &d->last);
		m->has_before = 1;
	}
}

void an_coll_dev_free(struct an_analysis *a, struct an_coll_dev *d)
{
	for (size_t i = 0; i < d->nopen; i++)
		coll_drop(a, &d->open[i]);
	if (d->has_last)
		coll_drop(a, &d->last);
	memset(d, 0, sizeof(*d));
}
