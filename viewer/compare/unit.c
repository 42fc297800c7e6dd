/* The units compare and check work on, one per process and GPU of a
 * result (viewer/analyze/result/result.h): analyze's, for traces, or the one
 * summary.c read from a summary. A unit points at its device and trace in
 * the result, which the side keeps; it adds only what compare derives:
 * the rows of categories and layers, what the peak's top leaves out, the
 * failures not got past, and the checks that what a result says adds up.
 * One piece of code for both kinds of input. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmp.h"
#include "result.h"

#define MAX_LAYER_NAME 65536

int cmp_bad(const struct cmp_where *w, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(w->err, w->cap, "%s: %s%s%s", w->input, path, *path ? ": " : "", msg);
	return -EINVAL;
}

/* A size compare can compute with: what a summary's reader checks of
 * every size, checked here of a trace's too. */
static int size_ok(struct cmp_where *x, const char *path, const char *key, uint64_t v)
{
	if (v <= GP_CMP_MAX_BYTES)
		return 0;
	return cmp_bad(x, path, "'%s' is %llu, not from 0 to %llu", key, (unsigned long long)v,
		   (unsigned long long)GP_CMP_MAX_BYTES);
}

/* ---- rows: categories, layers ---- */

struct rows {
	struct cmp_row *r;
	size_t n, cap;
};

static int row_add(struct rows *rs, const char *name, size_t len, uint64_t bytes)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct cmp_row *r = realloc(rs->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		rs->r = r;
		rs->cap = cap;
	}
	rs->r[rs->n].name = strndup(name, len);
	if (!rs->r[rs->n].name)
		return -ENOMEM;
	rs->r[rs->n++].bytes = bytes;
	return 0;
}

static void rows_free(struct rows *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->r[i].name);
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

static int row_name_cmp(const void *x, const void *y)
{
	return strcmp(((const struct cmp_row *)x)->name, ((const struct cmp_row *)y)->name);
}

/* Sorted by name, one row per name: diff.c merges two such lists. */
static int rows_finish(struct cmp_where *x, const char *path, struct rows *rs)
{
	size_t w = 0;

	if (!rs->n)
		return 0;
	qsort(rs->r, rs->n, sizeof(*rs->r), row_name_cmp);
	for (size_t i = 1; i < rs->n; i++) {
		if (strcmp(rs->r[i].name, rs->r[w].name) == 0) {
			rs->r[w].bytes += rs->r[i].bytes;
			free(rs->r[i].name);
			if (rs->r[w].bytes > GP_CMP_MAX_BYTES)
				return cmp_bad(x, path, "'%s' adds up to more than 8 PiB", rs->r[w].name);
			continue;
		}
		rs->r[++w] = rs->r[i];
	}
	rs->n = w + 1;
	return 0;
}

struct walk {
	struct cmp_where *x;
	const char *path; /* of by_layer, for messages */
	const char *sep;  /* between levels of the tree when written as one name */
	struct rows rows;
	char *name;       /* the path down to the node being read */
	size_t len, cap;
};

static int name_push(struct walk *w, const char *s, size_t *saved)
{
	size_t add = strlen(s) + (w->len ? strlen(w->sep) : 0);

	*saved = w->len;
	if (w->len + add + 1 > MAX_LAYER_NAME)
		return cmp_bad(w->x, w->path, "a layer name longer than %d bytes", MAX_LAYER_NAME);
	if (w->len + add + 1 > w->cap) {
		size_t cap = (w->len + add + 1) * 2;
		char *p = realloc(w->name, cap);

		if (!p)
			return -ENOMEM;
		w->name = p;
		w->cap = cap;
	}
	if (w->len) {
		memcpy(w->name + w->len, w->sep, strlen(w->sep));
		w->len += strlen(w->sep);
	}
	memcpy(w->name + w->len, s, strlen(s));
	w->len += strlen(s);
	w->name[w->len] = '\0';
	return 0;
}

/* A layer's own bytes are its bytes less its children's: what was made in
 * it and not in a layer below. Those partition the set, so the changes of
 * all layers add up to the change of the whole. */
static int walk_nodes(struct walk *w, const struct gp_an_node *v, size_t n, uint64_t *sum)
{
	int rc;

	*sum = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t below = 0;
		size_t saved;

		if ((rc = size_ok(w->x, w->path, "bytes", v[i].bytes)) ||
		    (rc = name_push(w, v[i].name, &saved)))
			return rc;
		if (v[i].nchildren && (rc = walk_nodes(w, v[i].children, v[i].nchildren, &below)))
			return rc;
		if (below > v[i].bytes)
			return cmp_bad(w->x, w->path, "the layers under '%.100s' hold more bytes than it",
				   w->name);
		if (v[i].bytes > below && (rc = row_add(&w->rows, w->name, w->len, v[i].bytes - below)))
			return rc;
		w->len = saved;
		w->name[w->len] = '\0';
		*sum += v[i].bytes;
		if (*sum > GP_CMP_MAX_BYTES)
			return cmp_bad(w->x, w->path, "the layers add up to more than 8 PiB");
	}
	return 0;
}

static int layer_rows(struct cmp_where *x, const struct gp_an_set *s, const char *path, int cuda,
		      struct cmp_unit *u)
{
	struct walk w = { .x = x, .sep = cuda ? " > " : "." };
	char p[96];
	uint64_t sum;
	int rc;

	snprintf(p, sizeof(p), "%s.by_layer", path);
	w.path = p;
	if ((rc = walk_nodes(&w, s->layers, s->nlayers, &sum)) || (rc = rows_finish(x, p, &w.rows)))
		goto cleanup;
	u->layers = w.rows.r;
	u->nlayers = w.rows.n;
	w.rows.r = NULL;
	w.rows.n = 0;
cleanup:
	rows_free(&w.rows);
	free(w.name);
	return rc;
}

/* Categories; `other` split by what it is (cudaMalloc, a library...) when
 * the result says, since that is where a change outside PyTorch shows. */
/* The failures d's program did not get past: analyze's count by outcome,
 * which must add up to oom_count. A summary written before analyze said
 * which were fatal: every failure not recovered from counts, so that a gate
 * never passes a run that may have died of one. */
static int oom_fatal(struct cmp_where *x, const struct gp_an_device *d, const char *path,
		     struct cmp_unit *u)
{
	uint64_t sum = 0;

	if (d->has_oom_outcomes) {
		for (int k = 0; k < GP_AN_OOM_N; k++)
			if (__builtin_add_overflow(sum, d->oom_outcomes[k], &sum))
				return cmp_bad(x, path, "'oom_outcomes' too large");
		if (sum != d->oom_count)
			return cmp_bad(x, path, "'oom_outcomes' add up to %llu, but 'oom_count' is %llu",
				       (unsigned long long)sum, (unsigned long long)d->oom_count);
		u->oom_fatal = d->oom_outcomes[GP_AN_OOM_FATAL];
		for (size_t i = 0; i < d->nooms && !u->oom_lead; i++)
			if (d->ooms[i].fatal)
				u->oom_lead = &d->ooms[i];
		return 0;
	}
	u->oom_fatal_guessed = 1;
	for (size_t i = 0; i < d->nooms; i++) {
		if (d->ooms[i].recovered)
			continue;
		u->oom_fatal++;
		if (!u->oom_lead)
			u->oom_lead = &d->ooms[i];
	}
	if (d->ooms_left_out.recovered > d->ooms_left_out.count ||
	    u->oom_fatal + d->ooms_left_out.count - d->ooms_left_out.recovered > d->oom_count)
		return cmp_bad(x, path, "'ooms' and 'ooms_left_out' say more failures than 'oom_count'");
	u->oom_fatal += d->ooms_left_out.count - d->ooms_left_out.recovered;
	return 0;
}

static int category_rows(struct cmp_where *x, const struct gp_an_set *s, const char *path,
			 struct cmp_unit *u)
{
	struct rows rs = { 0 };
	char p[96], q[128];
	int rc = 0;

	if (!s->has_categories)
		return 0;
	snprintf(p, sizeof(p), "%s.by_category", path);
	for (size_t i = 0; i < s->ncategories; i++) {
		const struct gp_an_category *c = &s->categories[i];
		uint64_t sum = 0;
		size_t first = rs.n;

		snprintf(q, sizeof(q), "%s[%zu]", p, i);
		if ((rc = size_ok(x, q, "bytes", c->bytes)))
			goto cleanup;
		for (size_t j = 0; j < c->by.n; j++) {
			char label[512];

			if ((rc = size_ok(x, q, "bytes", c->by.v[j].bytes)))
				goto cleanup;
			snprintf(label, sizeof(label), "%s: %s", c->category, c->by.v[j].name);
			if ((rc = row_add(&rs, label, strlen(label), c->by.v[j].bytes)))
				goto cleanup;
			sum += c->by.v[j].bytes;
		}
		if (c->by.n && sum != c->bytes) {
			rc = cmp_bad(x, q, "its 'by' adds up to %llu bytes, not its %llu",
				 (unsigned long long)sum, (unsigned long long)c->bytes);
			goto cleanup;
		}
		if (rs.n == first && (rc = row_add(&rs, c->category, strlen(c->category), c->bytes)))
			goto cleanup;
	}
	if ((rc = rows_finish(x, p, &rs)))
		goto cleanup;
	u->has_cats = 1;
	u->cats = rs.r;
	u->ncats = rs.n;
	rs.r = NULL;
	rs.n = 0;
cleanup:
	rows_free(&rs);
	return rc;
}

/* The peak's largest allocations, borrowed from the result, and what a
 * diff must know of the rest: whether they are all there, else the
 * smallest listed. */
static int top_allocs(struct cmp_where *x, const struct gp_an_set *s, const char *path, struct cmp_unit *u)
{
	char q[128];
	int rc;

	if (!s->ntop) {
		u->top_complete = !s->live_allocations;
		u->top_cut = UINT64_MAX;
		return 0;
	}
	for (size_t i = 0; i < s->ntop; i++) {
		snprintf(q, sizeof(q), "%s.top[%zu]", path, i);
		if ((rc = size_ok(x, q, "bytes", s->top[i].bytes)))
			return rc;
		if (i == 0 || s->top[i].bytes < u->top_cut)
			u->top_cut = s->top[i].bytes;
	}
	u->top = s->top;
	u->ntop = s->ntop;
	u->top_complete = u->ntop >= s->live_allocations;
	return 0;
}

void cmp_unit_free(struct cmp_unit *u)
{
	for (size_t i = 0; i < u->ncats; i++)
		free(u->cats[i].name);
	for (size_t i = 0; i < u->nlayers; i++)
		free(u->layers[i].name);
	free(u->cats);
	free(u->layers);
	memset(u, 0, sizeof(*u));
}

static int unit_make(struct cmp_where *x, const struct gp_an_result *r, size_t i, const char *input,
		     struct cmp_unit *u)
{
	const struct gp_an_device *d = &r->devices[i];
	const struct gp_an_peak *pk = &d->peak;
	char path[48], p[64];
	int rc;

	snprintf(path, sizeof(path), "devices[%zu]", i);
	u->dev = d;
	u->tr = &r->traces[d->trace];
	u->input = input ? input : u->tr->path;
	if ((rc = oom_fatal(x, d, path, u)))
		return rc;
	if (d->pid < 0 || d->pid > INT_MAX)
		return cmp_bad(x, path, "'pid' is %lld, not from 0 to %d", (long long)d->pid, INT_MAX);
	snprintf(p, sizeof(p), "%s.summary", path);
	if ((rc = size_ok(x, path, "capacity", d->capacity.v)) ||
	    (rc = size_ok(x, p, "allocated.peak", d->summary.allocated.peak.v)) ||
	    (rc = size_ok(x, p, "reserved.peak", d->summary.reserved.peak.v)))
		return rc;
	if (!d->has_peak)
		return 0;
	snprintf(p, sizeof(p), "%s.peak", path);
	if ((rc = size_ok(x, p, "bytes", pk->bytes)) ||
	    (rc = size_ok(x, p, "live_bytes", pk->set.live_bytes)) ||
	    (rc = size_ok(x, p, "live_allocations", pk->set.live_allocations)) ||
	    (rc = category_rows(x, &pk->set, p, u)) ||
	    (rc = layer_rows(x, &pk->set, p, d->mode == GP_AN_MODE_CUDA, u)))
		return rc;
	return top_allocs(x, &pk->set, p, u);
}

static int add_unit(struct cmp_side *side, struct cmp_unit *u)
{
	struct cmp_unit *p = realloc(side->u, (side->n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	side->u = p;
	side->u[side->n++] = *u;
	return 0;
}

int cmp_units_add(struct cmp_side *side, const struct gp_an_result *r, const char *input, int device,
		  char *err, size_t cap)
{
	struct cmp_where x = { input ? input : side->label, err, cap };
	int rc = 0;

	for (size_t i = 0; i < r->ndevices; i++) {
		struct cmp_unit u = { 0 };

		rc = unit_make(&x, r, i, input, &u);
		if (!rc && device >= 0 && u.dev->device != device) {
			cmp_unit_free(&u);
			continue;
		}
		if (rc || (rc = add_unit(side, &u))) {
			cmp_unit_free(&u);
			goto cleanup;
		}
	}
	for (size_t i = 0; i < r->ntraces; i++) {
		const char *name = input ? input : r->traces[i].path;

		/* a run cut short has a lower peak than a full one: say it
		 * where a shrink would be read as good news */
		if (r->traces[i].cut_short &&
		    (rc = cmp_note(&side->notes, "%s: %s was cut short (the program did not finish): "
				   "its peak is that of the part recorded", side->label, name)))
			goto cleanup;
	}
cleanup:
	if (rc == -ENOMEM)
		snprintf(err, cap, "out of memory");
	return rc;
}
