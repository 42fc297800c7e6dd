/* The verdict on one pair, and what changed at the peak.
 *
 * What changed is told three ways, each from what was alive at the peak
 * analyze reports (the peak of allocated memory; of reserved in native
 * mode): by category, by layer (a layer's own bytes, so the rows add up and
 * a change shows once, where it was made, not again in every enclosing
 * module), and by the largest allocations, matched across the runs by what
 * they are (layer, category, phase, op, API), since addresses and times
 * differ from run to run. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmp.h"

int cmp_note(struct cmp_notes *l, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		char **p = realloc(l->s, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->s = p;
		l->cap = cap;
	}
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	l->s[l->n++] = s;
	return 0;
}

void cmp_notes_free(struct cmp_notes *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
	memset(l, 0, sizeof(*l));
}

void cmp_unit_where(char *buf, size_t cap, const struct cmp_unit *u, const struct cmp_side *side)
{
	size_t same = 0;

	for (size_t i = 0; i < side->n; i++)
		same += side->u[i].dev->device == u->dev->device;
	if (same <= 1)
		snprintf(buf, cap, "cuda:%d", u->dev->device);
	else if (u->tr->rank >= 0)
		snprintf(buf, cap, "cuda:%d of rank %lld", u->dev->device, (long long)u->tr->rank);
	else
		snprintf(buf, cap, "cuda:%d of process %lld", u->dev->device, (long long)u->dev->pid);
}

const char *cmp_metric_option(enum gp_cmp_metric m)
{
	switch (m) {
	case GP_CMP_PEAK_ALLOCATED:
		return "peak-allocated";
	case GP_CMP_PEAK_RESERVED:
		return "peak-reserved";
	default:
		return "peak";
	}
}

static const char *peak_name(const char *what)
{
	if (strcmp(what, "allocated") == 0)
		return "peak allocated";
	if (strcmp(what, "reserved") == 0)
		return "peak reserved";
	return "peak device memory";
}

/* "peak allocated" -> "allocated memory" */
static const char *memory_kind(const char *what)
{
	if (strcmp(what, "peak allocated") == 0)
		return "allocated memory";
	if (strcmp(what, "peak reserved") == 0)
		return "reserved memory";
	return "device memory";
}

int cmp_metric_value(const struct cmp_unit *u, enum gp_cmp_metric m, const char *side, uint64_t *v,
		     const char **what, char *err, size_t cap)
{
	switch (m) {
	case GP_CMP_PEAK_ALLOCATED:
		*what = "peak allocated";
		if (!u->dev->summary.allocated.known) {
			snprintf(err, cap,
				 "%s: %s: peak allocated is not known for GPU %d of process %lld "
				 "(%s mode%s): use --metric peak-reserved%s",
				 side, u->input, u->dev->device, (long long)u->dev->pid, gp_an_mode_names[u->dev->mode],
				 strcmp(gp_an_mode_names[u->dev->mode], "native") == 0 ? ": PyTorch's allocator hides its tensors"
								: "",
				 strcmp(gp_an_mode_names[u->dev->mode], "native") == 0 ? ", or trace in tensor mode" : "");
			return -ENODATA;
		}
		*v = u->dev->summary.allocated.peak.v;
		return 0;
	case GP_CMP_PEAK_RESERVED:
		*what = "peak reserved";
		if (!u->dev->summary.reserved.known) {
			snprintf(err, cap,
				 "%s: %s: peak reserved is not known for GPU %d of process %lld "
				 "(%s mode: no memory pools or segments in the trace): use --metric "
				 "peak-allocated",
				 side, u->input, u->dev->device, (long long)u->dev->pid, gp_an_mode_names[u->dev->mode]);
			return -ENODATA;
		}
		*v = u->dev->summary.reserved.peak.v;
		return 0;
	default:
		if (u->dev->has_peak) {
			*what = peak_name(u->dev->peak.what);
			*v = u->dev->peak.bytes;
		} else {
			/* nothing allocated: the peak of whatever the mode counts is 0 */
			*what = peak_name(strcmp(gp_an_mode_names[u->dev->mode], "native") == 0 ? "reserved" :
					  strcmp(gp_an_mode_names[u->dev->mode], "tensor") == 0 ? "allocated" : "device");
			*v = 0;
		}
		return 0;
	}
}

uint64_t cmp_allowed(const struct gp_cmp_limit *l, uint64_t base)
{
	uint64_t a = 0, b = 0;

	/* base <= 2^53 and percent <= 1000: the product fits */
	if (l->has_percent)
		a = (uint64_t)floor((double)base * l->percent / 100.0);
	if (l->has_bytes)
		b = l->bytes;
	return a > b ? a : b;
}

static int64_t iabs(int64_t x)
{
	return x < 0 ? -x : x;
}

static int change_cmp(const void *x, const void *y)
{
	const struct cmp_change *a = x, *b = y;

	if (iabs(a->delta) != iabs(b->delta))
		return iabs(a->delta) > iabs(b->delta) ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Both lists are sorted by name, one row per name (summary.c). */
static int diff_rows(const struct cmp_row *b, size_t nb, const struct cmp_row *n, size_t nn,
		     struct cmp_change **out, size_t *nout)
{
	struct cmp_change *c = calloc(nb + nn + 1, sizeof(*c));
	size_t i = 0, j = 0, k = 0;

	if (!c)
		return -ENOMEM;
	while (i < nb || j < nn) {
		int o = i == nb ? 1 : j == nn ? -1 : strcmp(b[i].name, n[j].name);
		struct cmp_change x = { 0 };

		if (o <= 0) {
			x.name = b[i].name;
			x.base = b[i++].bytes;
		}
		if (o >= 0) {
			x.name = n[j].name;
			x.new_ = n[j++].bytes;
		}
		x.delta = (int64_t)x.new_ - (int64_t)x.base;
		if (x.delta)
			c[k++] = x;
	}
	qsort(c, k, sizeof(*c), change_cmp);
	*out = c;
	*nout = k;
	return 0;
}

static int opt_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int key_cmp(const struct gp_an_alloc *a, const struct gp_an_alloc *b)
{
	int c;

	if ((c = opt_cmp(a->layer, b->layer)) || (c = opt_cmp(a->category, b->category)) ||
	    (c = opt_cmp(a->phase, b->phase)) || (c = opt_cmp(a->op, b->op)) ||
	    (c = opt_cmp(a->api, b->api)) || (c = opt_cmp(a->what, b->what)))
		return c;
	return 0;
}

static int alloc_cmp(const void *x, const void *y)
{
	const struct gp_an_alloc *a = *(const struct gp_an_alloc *const *)x;
	const struct gp_an_alloc *b = *(const struct gp_an_alloc *const *)y;
	int c = key_cmp(a, b);

	if (c)
		return c;
	return a->bytes > b->bytes ? -1 : a->bytes < b->bytes;
}

static int achange_cmp(const void *x, const void *y)
{
	const struct cmp_achange *a = x, *b = y;
	uint64_t sa = a->base > a->new_ ? a->base : a->new_, sb = b->base > b->new_ ? b->base : b->new_;

	if (iabs(a->delta) != iabs(b->delta))
		return iabs(a->delta) > iabs(b->delta) ? -1 : 1;
	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (a->delta != b->delta)
		return a->delta > b->delta ? -1 : 1;
	if (a->base != b->base)
		return a->base > b->base ? -1 : 1;
	return key_cmp(a->a, b->a);
}

static int same_change(const struct cmp_achange *a, const struct cmp_achange *b)
{
	return !key_cmp(a->a, b->a) && a->base_known == b->base_known && a->new_known == b->new_known &&
	       a->base == b->base && a->new_ == b->new_ && a->base_below == b->base_below &&
	       a->new_below == b->new_below;
}

static const struct gp_an_alloc **sorted_top(const struct cmp_unit *u)
{
	const struct gp_an_alloc **v = malloc((u->ntop ? u->ntop : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < u->ntop; i++)
		v[i] = &u->top[i];
	qsort(v, u->ntop, sizeof(*v), alloc_cmp);
	return v;
}

/* Largest with largest among the allocations of one kind; one without a
 * counterpart is new (or gone) when the other side's list is complete, and
 * otherwise was at most that list's smallest. */
static int diff_allocs(const struct cmp_unit *ub, const struct cmp_unit *un, struct cmp_achange **out,
		       size_t *nout)
{
	const struct gp_an_alloc **b = sorted_top(ub), **n = sorted_top(un);
	struct cmp_achange *c = calloc(ub->ntop + un->ntop + 1, sizeof(*c));
	size_t i = 0, j = 0, k = 0;
	int rc = -ENOMEM;

	if (!b || !n || !c)
		goto cleanup;
	while (i < ub->ntop || j < un->ntop) {
		int o = i == ub->ntop ? 1 : j == un->ntop ? -1 : key_cmp(b[i], n[j]);
		struct cmp_achange x = { 0 };

		if (o == 0) {
			x.a = b[i];
			x.base_known = x.new_known = 1;
			x.base = b[i++]->bytes;
			x.new_ = n[j++]->bytes;
			x.delta = (int64_t)x.new_ - (int64_t)x.base;
		} else if (o < 0) {
			x.a = b[i];
			x.base_known = 1;
			x.base = b[i++]->bytes;
			if (un->top_complete) {
				x.new_known = 1;
				x.delta = -(int64_t)x.base;
			} else if (x.base > un->top_cut) {
				x.new_below = un->top_cut;
				x.delta = -(int64_t)(x.base - un->top_cut);
			}
		} else {
			x.a = n[j];
			x.new_known = 1;
			x.new_ = n[j++]->bytes;
			if (ub->top_complete) {
				x.base_known = 1;
				x.delta = (int64_t)x.new_;
			} else if (x.new_ > ub->top_cut) {
				x.base_below = ub->top_cut;
				x.delta = (int64_t)(x.new_ - ub->top_cut);
			}
		}
		if (!x.delta)
			continue;
		/* the same change to several allocations of one kind (the two
		 * moments of Adam) reads best as one row */
		if (k && same_change(&c[k - 1], &x)) {
			c[k - 1].count++;
			c[k - 1].delta += x.delta;
			continue;
		}
		x.count = 1;
		c[k++] = x;
	}
	qsort(c, k, sizeof(*c), achange_cmp);
	*out = c;
	*nout = k;
	c = NULL;
	rc = 0;
cleanup:
	free(b);
	free(n);
	free(c);
	return rc;
}

int cmp_diff(struct cmp_pair *p, const struct gp_cmp_settings *s, char *err, size_t cap)
{
	const struct cmp_unit *b = p->b, *n = p->n;
	const char *wb = NULL, *wn = NULL;
	int rc;

	if (b && (rc = cmp_metric_value(b, s->metric, "BASE", &p->vb, &wb, err, cap)))
		return rc;
	if (n && (rc = cmp_metric_value(n, s->metric, "NEW", &p->vn, &wn, err, cap)))
		return rc;
	p->what = wb ? wb : wn;
	if (!b || !n) {
		p->verdict = b ? CMP_MISSING : CMP_ONLY_NEW;
		return 0;
	}
	if (strcmp(wb, wn) != 0) {
		snprintf(err, cap, "GPU %d: BASE's peak is of %s (%s mode), NEW's of %s (%s mode): "
			 "trace both the same way, or choose --metric peak-allocated or peak-reserved",
			 b->dev->device, memory_kind(wb), gp_an_mode_names[b->dev->mode], memory_kind(wn), gp_an_mode_names[n->dev->mode]);
		return -EINVAL;
	}
	if (strcmp(gp_an_mode_names[b->dev->mode], gp_an_mode_names[n->dev->mode]) != 0 &&
	    cmp_note(&p->notes, "BASE was traced in %s mode, NEW in %s mode: %s means a different thing "
		     "in each (viewer/analyze/CATEGORIES.md)", gp_an_mode_names[b->dev->mode], gp_an_mode_names[n->dev->mode], p->what))
		return -ENOMEM;
	p->delta = (int64_t)p->vn - (int64_t)p->vb;
	p->has_percent = p->vb != 0;
	p->percent = p->vb ? 100.0 * (double)p->delta / (double)p->vb : 0;
	p->allowed = cmp_allowed(&s->limit, p->vb);
	if (p->delta > 0 && (uint64_t)p->delta > p->allowed)
		p->verdict = CMP_REGRESSION;
	else if (p->delta > 0)
		p->verdict = CMP_GREW;
	else if (p->delta < 0)
		p->verdict = CMP_SHRANK;
	else
		p->verdict = CMP_UNCHANGED;
	if (n->tr->cut_short && !b->tr->cut_short &&
	    cmp_note(&p->notes, "NEW's trace was cut short: its peak is that of the part recorded"))
		return -ENOMEM;
	if (n->dev->oom_count > b->dev->oom_count &&
	    cmp_note(&p->notes, "NEW had %llu failed allocation%s (BASE %llu): `gpuprof analyze` says why",
		     (unsigned long long)n->dev->oom_count, n->dev->oom_count == 1 ? "" : "s",
		     (unsigned long long)b->dev->oom_count))
		return -ENOMEM;
	/* NEW's fails the comparison (run.c); BASE's makes its peak a poor
	 * baseline */
	if (b->oom_fatal &&
	    cmp_note(&p->notes, "BASE's program did not get past an out-of-memory error: its peak is that "
		     "of a run that did not finish"))
		return -ENOMEM;
	if (!b->dev->has_peak || !n->dev->has_peak)
		return 0;
	if (s->metric != GP_CMP_PEAK &&
	    strcmp(b->dev->peak.what, s->metric == GP_CMP_PEAK_ALLOCATED ? "allocated" : "reserved") != 0 &&
	    cmp_note(&p->notes, "the categories, layers and allocations are those alive at the peak "
		     "analyze reports, of %s", memory_kind(peak_name(b->dev->peak.what))))
		return -ENOMEM;
	p->has_breakdown = 1;
	if (b->has_cats && n->has_cats &&
	    (rc = diff_rows(b->cats, b->ncats, n->cats, n->ncats, &p->cats, &p->ncats)))
		return rc;
	if ((rc = diff_rows(b->layers, b->nlayers, n->layers, n->nlayers, &p->layers, &p->nlayers)))
		return rc;
	return diff_allocs(b, n, &p->allocs, &p->nallocs);
}

static int bytes_desc(const void *x, const void *y)
{
	const struct cmp_row *a = *(const struct cmp_row *const *)x, *b = *(const struct cmp_row *const *)y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->name, b->name);
}

int cmp_rows_sorted(const struct cmp_row *r, size_t n, const struct cmp_row ***out)
{
	const struct cmp_row **v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = &r[i];
	qsort(v, n, sizeof(*v), bytes_desc);
	*out = v;
	return 0;
}
