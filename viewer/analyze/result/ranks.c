/* The ranks of a distributed job side by side (result.h, gp_an_ranks):
 * each rank's peaks, how far apart they are, which rank would run out
 * first, and what it holds that the others do not. Made from the result
 * alone, after the analysis: every number here is one the result already
 * has. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

#define RANK_DIFF_MAX 10 /* rows of each "what differs" list */
/* Missing ranks listed (the lowest); missing_count has them all. */
#define GP_AN_MISSING_LISTED 1024

const char *const gp_an_first_out_names[GP_AN_FIRST_N] = { "oom", "headroom", "peak" };

static int by_rank(const void *a, const void *b)
{
	const struct gp_an_rank *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->device > y->device) - (x->device < y->device);
}

/* A name's bytes on each side, gathered before they become diff rows. */
struct pairs {
	struct gp_an_rank_diff *v;
	size_t n, cap;
};

static int pair_add(struct pairs *p, const char *name, uint64_t bytes, int first)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].name, name) == 0) {
			*(first ? &p->v[i].first : &p->v[i].typical) += bytes;
			return 0;
		}
	if (p->n == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 32;
		struct gp_an_rank_diff *g = realloc(p->v, c * sizeof(*g));

		if (!g)
			return -ENOMEM;
		p->v = g;
		p->cap = c;
	}
	p->v[p->n++] = (struct gp_an_rank_diff){ name, first ? bytes : 0, first ? 0 : bytes, 0 };
	return 0;
}

static int by_change(const void *a, const void *b)
{
	const struct gp_an_rank_diff *x = a, *y = b;
	uint64_t ax = (uint64_t)llabs(x->delta), ay = (uint64_t)llabs(y->delta);

	if (ax != ay)
		return ax > ay ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The pairs that changed, largest change first, at most RANK_DIFF_MAX, into
 * the result's arena; the names there too (the pairs' may be the walk's). */
static int pairs_finish(struct gp_an_result *r, struct pairs *p, struct gp_an_rank_diff **out,
			size_t *nout)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++) {
		p->v[i].delta = (int64_t)p->v[i].first - (int64_t)p->v[i].typical;
		if (p->v[i].delta)
			p->v[n++] = p->v[i];
	}
	if (n)
		qsort(p->v, n, sizeof(*p->v), by_change);
	if (n > RANK_DIFF_MAX)
		n = RANK_DIFF_MAX;
	*out = n ? gp_an_alloc(r, n * sizeof(**out)) : NULL;
	if (n && !*out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		(*out)[i] = p->v[i];
		(*out)[i].name = gp_an_strndup(r, p->v[i].name, strlen(p->v[i].name));
		if (!(*out)[i].name)
			return -ENOMEM;
	}
	*nout = n;
	return 0;
}

static int categories(struct pairs *p, const struct gp_an_set *s, int first, struct gp_an_result *r)
{
	for (size_t i = 0; s->has_categories && i < s->ncategories; i++) {
		const struct gp_an_category *c = &s->categories[i];

		/* "other" by what it is: NCCL's buffers apart from cuBLAS's */
		if (c->by.present && c->by.n) {
			for (size_t k = 0; k < c->by.n; k++) {
				size_t len = strlen(c->category) + strlen(c->by.v[k].name) + 3;
				char *name = gp_an_alloc(r, len);

				if (!name)
					return -ENOMEM;
				snprintf(name, len, "%s: %s", c->category, c->by.v[k].name);
				if (pair_add(p, name, c->by.v[k].bytes, first))
					return -ENOMEM;
			}
		} else if (pair_add(p, c->category, c->bytes, first)) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* A layer's own bytes (its bytes less its children's), under its full
 * path: those partition the set, so the changes add up to the whole. */
static int layers(struct pairs *p, const struct gp_an_node *v, size_t n, const char *prefix,
		  const char *sep, int first, struct gp_an_result *r)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t below = 0;
		size_t len = strlen(prefix) + strlen(sep) + strlen(v[i].name) + 1;
		char *name = gp_an_alloc(r, len);

		if (!name)
			return -ENOMEM;
		snprintf(name, len, "%s%s%s", prefix, *prefix ? sep : "", v[i].name);
		for (size_t k = 0; k < v[i].nchildren; k++)
			below += v[i].children[k].bytes;
		if (v[i].bytes > below && pair_add(p, name, v[i].bytes - below, first))
			return -ENOMEM;
		if (layers(p, v[i].children, v[i].nchildren, name, sep, first, r))
			return -ENOMEM;
	}
	return 0;
}

static int lines(struct pairs *p, const struct gp_an_set *s, int first)
{
	for (size_t i = 0; s->by_line.present && i < s->by_line.n; i++)
		if (pair_add(p, s->by_line.v[i].name ? s->by_line.v[i].name : "(no line)",
			     s->by_line.v[i].bytes, first))
			return -ENOMEM;
	return 0;
}

/* What the first rank holds at its peak that the typical one does not. */
static int explain(struct gp_an_result *r, struct gp_an_ranks *k)
{
	const struct gp_an_device *f = &r->devices[k->v[k->first].device];
	const struct gp_an_device *t = &r->devices[k->v[k->typical].device];
	const char *sep = f->mode == GP_AN_MODE_CUDA ? " > " : ".";
	struct pairs p = { 0 };
	int rc = 0;

	k->other_delta = (int64_t)k->v[k->first].other_peak - (int64_t)k->v[k->typical].other_peak;
	if (!f->has_peak || !t->has_peak)
		return 0;
	rc = categories(&p, &f->peak.set, 1, r) ?: categories(&p, &t->peak.set, 0, r) ?:
	     pairs_finish(r, &p, &k->categories, &k->ncategories);
	p.n = 0;
	if (!rc)
		rc = layers(&p, f->peak.set.layers, f->peak.set.nlayers, "", sep, 1, r) ?:
		     layers(&p, t->peak.set.layers, t->peak.set.nlayers, "", sep, 0, r) ?:
		     pairs_finish(r, &p, &k->layers, &k->nlayers);
	p.n = 0;
	if (!rc)
		rc = lines(&p, &f->peak.set, 1) ?: lines(&p, &t->peak.set, 0) ?:
		     pairs_finish(r, &p, &k->lines, &k->nlines);
	free(p.v);
	return rc;
}

static void sort_by_peak(const struct gp_an_ranks *k, size_t *idx)
{
	/* insertion sort of indices by peak: ranks are few (thousands at most) */
	for (size_t i = 0; i < k->n; i++)
		idx[i] = i;
	for (size_t i = 1; i < k->n; i++)
		for (size_t j = i; j > 0 && k->v[idx[j - 1]].peak > k->v[idx[j]].peak; j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
}

/* Whether x ran out before y: by their steps where both say one and they
 * differ (no clock between hosts needed), else by time. */
static int oom_before(const struct gp_an_rank *x, const struct gp_an_rank *y)
{
	if (x->first_oom_step >= 0 && y->first_oom_step >= 0 && x->first_oom_step != y->first_oom_step)
		return x->first_oom_step < y->first_oom_step;
	return x->first_oom_t < y->first_oom_t;
}

static void choose_first(struct gp_an_ranks *k)
{
	size_t first = k->max;

	k->first_by = GP_AN_FIRST_PEAK;
	/* one that did run out: the earliest */
	for (size_t i = 0; i < k->n; i++)
		if (!isnan(k->v[i].first_oom_t) &&
		    (k->first_by != GP_AN_FIRST_OOM || oom_before(&k->v[i], &k->v[first]))) {
			first = i;
			k->first_by = GP_AN_FIRST_OOM;
		}
	if (k->first_by == GP_AN_FIRST_OOM) {
		k->first = first;
		return;
	}
	/* else the least room left on its GPU */
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].headroom.known &&
		    (k->first_by != GP_AN_FIRST_HEADROOM || k->v[i].headroom.v < k->v[first].headroom.v)) {
			first = i;
			k->first_by = GP_AN_FIRST_HEADROOM;
		}
	k->first = first;
}

/* When x ran out: the first failure the program did not get past inside a
 * library (fatal, or got past by completing later steps): one the
 * allocator's retry or a library that caught it got past (cuDNN's
 * workspace trials) is no running out. */
static void first_oom(const struct gp_an_device *d, struct gp_an_rank *x)
{
	x->first_oom_t = NAN;
	x->first_oom_step = -1;
	for (size_t o = 0; o < d->nooms; o++) {
		const struct gp_an_oom *f = &d->ooms[o];

		if (f->outcome == GP_AN_OOM_CAUGHT || f->outcome == GP_AN_OOM_RETRIED ||
		    (!isnan(x->first_oom_t) && f->t >= x->first_oom_t))
			continue;
		x->first_oom_t = f->t;
		x->first_oom_step = f->step;
		x->first_oom_step_when = f->step_when;
	}
}

int gp_an_ranks_fill(struct gp_an_result *r)
{
	struct gp_an_ranks *k = &r->ranks;
	size_t n = 0, *idx;
	int64_t world = -1;

	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < r->ndevices; i++)
		n += r->traces[r->devices[i].trace].rank >= 0;
	if (n < 2)
		return 0;
	k->v = gp_an_alloc(r, n * sizeof(*k->v));
	idx = gp_an_alloc(r, n * sizeof(*idx));
	if (!k->v || !idx)
		return -ENOMEM;
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct gp_an_device *d = &r->devices[i];
		const struct gp_an_trace *t = &r->traces[d->trace];
		struct gp_an_rank *x;

		if (t->rank < 0)
			continue;
		x = &k->v[k->n++];
		x->rank = t->rank;
		x->local_rank = t->local_rank;
		x->device = i;
		x->hostname = t->hostname;
		x->peak = d->has_peak ? d->peak.bytes : 0;
		if (d->has_peak && !k->what)
			k->what = d->peak.what;
		x->allocated = d->summary.allocated.known ? d->summary.allocated.peak : (struct gp_an_opt){ 0 };
		x->reserved = d->summary.reserved.known ? d->summary.reserved.peak : (struct gp_an_opt){ 0 };
		x->device_peak = d->summary.total_peak;
		x->other_peak = d->summary.other_peak;
		x->capacity = d->capacity;
		if (d->capacity.known)
			x->headroom = (struct gp_an_opt){ 1, d->capacity.v > x->device_peak ?
								 d->capacity.v - x->device_peak : 0 };
		x->oom_count = d->oom_count;
		first_oom(d, x);
		x->end_signal = t->end_signal;
		x->end_t = t->end_t;
		if (t->world_size > world)
			world = t->world_size;
	}
	qsort(k->v, k->n, sizeof(*k->v), by_rank);
	k->world_size = world;
	if (world > 0) {
		/* world_size is the traces' claim: counted from the ranks there
		 * are, and only the first few missing listed, so that a claim
		 * of millions costs no more than the traces themselves */
		size_t distinct = 0, listed;

		for (size_t j = 0; j < k->n; j++)
			distinct += k->v[j].rank < world && (j == 0 || k->v[j].rank != k->v[j - 1].rank);
		k->missing_count = (uint64_t)world - distinct;
		listed = k->missing_count < GP_AN_MISSING_LISTED ? (size_t)k->missing_count
								: GP_AN_MISSING_LISTED;
		k->missing = listed ? gp_an_alloc(r, listed * sizeof(*k->missing)) : NULL;
		if (listed && !k->missing)
			return -ENOMEM;
		/* each step lists a rank or passes one that is there */
		for (int64_t w = 0, j = 0; k->nmissing < listed; w++) {
			while ((size_t)j < k->n && k->v[j].rank < w)
				j++;
			if ((size_t)j >= k->n || k->v[j].rank != w)
				k->missing[k->nmissing++] = w;
		}
	}
	sort_by_peak(k, idx);
	k->min = idx[0];
	k->max = idx[k->n - 1];
	k->median = idx[(k->n - 1) / 2];
	k->spread = k->v[k->max].peak - k->v[k->min].peak;
	k->spread_share = k->v[k->max].peak ?
				  gp_an_round((double)k->spread / (double)k->v[k->max].peak, 4) : 0;
	choose_first(k);
	/* the others a signal ended once the first had run out: torchrun
	 * ends every rank when one fails */
	for (size_t i = 0; k->first_by == GP_AN_FIRST_OOM && i < k->n; i++) {
		struct gp_an_rank *x = &k->v[i];

		x->stopped_after_first = i != k->first && x->end_signal && isnan(x->first_oom_t) &&
					 !isnan(x->end_t) && x->end_t >= k->v[k->first].first_oom_t;
	}
	k->typical = k->first != k->median ? k->median : k->min;
	k->present = 1;
	return k->first != k->typical ? explain(r, k) : 0;
}
