/* The reports for machines: gpuprof.compare/1 and gpuprof.check/1
 * (README.md in this directory). Every row that changed is listed, not only
 * the --top ones the text shows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmp.h"

struct jb {
	int oom;
};

/* json-c returns NULL when out of memory, and json_object_object_add
 * takes NULL as JSON null: so a failure is remembered, never dereferenced. */
static struct json_object *chk(struct jb *b, struct json_object *o)
{
	if (!o)
		b->oom = 1;
	return o;
}

static void put(struct jb *b, struct json_object *o, const char *k, struct json_object *v)
{
	if (!o || json_object_object_add(o, k, v)) {
		json_object_put(v);
		b->oom = 1;
	}
}

static void push(struct jb *b, struct json_object *a, struct json_object *v)
{
	if (!a || json_object_array_add(a, v)) {
		json_object_put(v);
		b->oom = 1;
	}
}

static struct json_object *jstr(struct jb *b, const char *s)
{
	return s ? chk(b, json_object_new_string(s)) : NULL;
}

static struct json_object *jint(struct jb *b, int64_t v)
{
	return chk(b, json_object_new_int64(v));
}

/* Fixed decimals: the same bytes every run, for goldens and diffs. */
static struct json_object *jnum(struct jb *b, double v, int decimals)
{
	char s[64];

	snprintf(s, sizeof(s), "%.*f", decimals, v);
	return chk(b, json_object_new_double_s(v, s));
}

static struct json_object *jobj(struct jb *b)
{
	return chk(b, json_object_new_object());
}

static struct json_object *jarr(struct jb *b)
{
	return chk(b, json_object_new_array());
}

static struct json_object *notes_json(struct jb *b, const struct cmp_notes *n)
{
	struct json_object *a = jarr(b);

	for (size_t i = 0; i < n->n; i++)
		push(b, a, jstr(b, n->s[i]));
	return a;
}

static struct json_object *inputs_json(struct jb *b, const struct cmp_side *s)
{
	struct json_object *o = jobj(b), *a = jarr(b);

	for (size_t i = 0; i < s->ninputs; i++)
		push(b, a, jstr(b, s->inputs[i]));
	put(b, o, "inputs", a);
	put(b, o, "processes", jint(b, (int64_t)s->nprocs));
	return o;
}

static struct json_object *unit_json(struct jb *b, const struct cmp_unit *u, uint64_t value)
{
	struct json_object *o = jobj(b), *pk;

	put(b, o, "input", jstr(b, u->input));
	put(b, o, "trace", jstr(b, u->trace));
	put(b, o, "pid", jint(b, u->pid));
	put(b, o, "rank", u->rank >= 0 ? jint(b, u->rank) : NULL);
	put(b, o, "device", jint(b, u->device));
	put(b, o, "cmdline", jstr(b, u->cmdline));
	put(b, o, "hostname", jstr(b, u->hostname));
	put(b, o, "mode", jstr(b, u->mode));
	put(b, o, "value", jint(b, (int64_t)value));
	if (!u->has_peak) {
		put(b, o, "peak", NULL);
		return o;
	}
	pk = jobj(b);
	put(b, pk, "what", jstr(b, u->peak_what));
	put(b, pk, "bytes", jint(b, (int64_t)u->peak_bytes));
	put(b, pk, "t", jnum(b, u->peak_t, 6));
	put(b, pk, "step", u->peak_step >= 0 ? jint(b, u->peak_step) : NULL);
	put(b, pk, "phase", jstr(b, u->peak_phase));
	put(b, pk, "layer", jstr(b, u->peak_layer));
	put(b, pk, "live_bytes", jint(b, (int64_t)u->live_bytes));
	put(b, o, "peak", pk);
	return o;
}

static struct json_object *changes_json(struct jb *b, const struct cmp_change *c, size_t n)
{
	struct json_object *a = jarr(b);

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = jobj(b);

		put(b, o, "name", jstr(b, c[i].name));
		put(b, o, "base", jint(b, (int64_t)c[i].base));
		put(b, o, "new", jint(b, (int64_t)c[i].new_));
		put(b, o, "change", jint(b, c[i].delta));
		push(b, a, o);
	}
	return a;
}

static struct json_object *achanges_json(struct jb *b, const struct cmp_achange *c, size_t n)
{
	struct json_object *a = jarr(b);

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = jobj(b);
		const struct cmp_alloc *x = c[i].a;

		put(b, o, "layer", jstr(b, x->layer));
		put(b, o, "category", jstr(b, x->category));
		put(b, o, "phase", jstr(b, x->phase));
		put(b, o, "op", jstr(b, x->op));
		put(b, o, "api", jstr(b, x->api));
		put(b, o, "what", jstr(b, x->what));
		put(b, o, "count", jint(b, (int64_t)c[i].count));
		put(b, o, "base", c[i].base_known ? jint(b, (int64_t)c[i].base) : NULL);
		put(b, o, "new", c[i].new_known ? jint(b, (int64_t)c[i].new_) : NULL);
		put(b, o, "base_at_most", c[i].base_known ? NULL : jint(b, (int64_t)c[i].base_below));
		put(b, o, "new_at_most", c[i].new_known ? NULL : jint(b, (int64_t)c[i].new_below));
		put(b, o, "change", jint(b, c[i].delta));
		put(b, o, "exact", chk(b, json_object_new_boolean(c[i].base_known && c[i].new_known)));
		push(b, a, o);
	}
	return a;
}

static const char *verdict_id(enum cmp_verdict v)
{
	static const char *const ids[] = {
		"regression", "grew", "unchanged", "shrank", "missing", "new_only"
	};

	return ids[v];
}

static struct json_object *limit_json(struct jb *b, const struct gp_cmp_limit *l, const char *pct_name)
{
	struct json_object *o = jobj(b);

	put(b, o, pct_name, l->has_percent ? jnum(b, l->percent, 3) : NULL);
	put(b, o, "bytes", l->has_bytes ? jint(b, (int64_t)l->bytes) : NULL);
	return o;
}

static int emit(struct jb *b, struct json_object *doc, FILE *out)
{
	const char *s;
	int rc = 0;

	if (b->oom || !doc) {
		json_object_put(doc);
		return -ENOMEM;
	}
	s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		rc = -ENOMEM;
	else if (fputs(s, out) == EOF || fputc('\n', out) == EOF || fflush(out) || ferror(out))
		rc = -EIO;
	json_object_put(doc);
	return rc;
}

int cmp_json_compare(const struct gp_cmp_settings *s, const struct cmp_side *base,
		     const struct cmp_side *new_, const struct cmp_pair *p, size_t n, int over)
{
	struct jb b = { 0 };
	struct json_object *doc = jobj(&b), *pairs = jarr(&b), *notes = jarr(&b);

	put(&b, doc, "schema", jstr(&b, GP_CMP_SCHEMA));
	put(&b, doc, "gpuprof_version", jstr(&b, GPUPROF_VERSION));
	put(&b, doc, "verdict", jstr(&b, over ? "regression" : "ok"));
	put(&b, doc, "metric", jstr(&b, cmp_metric_option(s->metric)));
	put(&b, doc, "limit", limit_json(&b, &s->limit, "percent"));
	put(&b, doc, "base", inputs_json(&b, base));
	put(&b, doc, "new", inputs_json(&b, new_));
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = jobj(&b);
		int both = p[i].b && p[i].n;

		put(&b, o, "device", jint(&b, (p[i].b ? p[i].b : p[i].n)->device));
		put(&b, o, "verdict", jstr(&b, verdict_id(p[i].verdict)));
		put(&b, o, "matched_by", jstr(&b, p[i].matched_by));
		put(&b, o, "what", jstr(&b, p[i].what));
		put(&b, o, "base", p[i].b ? unit_json(&b, p[i].b, p[i].vb) : NULL);
		put(&b, o, "new", p[i].n ? unit_json(&b, p[i].n, p[i].vn) : NULL);
		put(&b, o, "change", both ? jint(&b, p[i].delta) : NULL);
		put(&b, o, "change_percent", both && p[i].has_percent ? jnum(&b, p[i].percent, 4) : NULL);
		put(&b, o, "allowed", both ? jint(&b, (int64_t)p[i].allowed) : NULL);
		put(&b, o, "categories", p[i].has_breakdown && p[i].b->has_cats && p[i].n->has_cats ?
						 changes_json(&b, p[i].cats, p[i].ncats) : NULL);
		put(&b, o, "layers", p[i].has_breakdown ? changes_json(&b, p[i].layers, p[i].nlayers) : NULL);
		put(&b, o, "allocations",
		    p[i].has_breakdown ? achanges_json(&b, p[i].allocs, p[i].nallocs) : NULL);
		put(&b, o, "notes", notes_json(&b, &p[i].notes));
		push(&b, pairs, o);
	}
	put(&b, doc, "pairs", pairs);
	for (size_t i = 0; i < base->notes.n; i++)
		push(&b, notes, jstr(&b, base->notes.s[i]));
	for (size_t i = 0; i < new_->notes.n; i++)
		push(&b, notes, jstr(&b, new_->notes.s[i]));
	put(&b, doc, "notes", notes);
	return emit(&b, doc, s->out);
}

static struct json_object *rows_json(struct jb *b, const struct cmp_row *r, size_t n)
{
	const struct cmp_row **v;
	struct json_object *a;

	if (cmp_rows_sorted(r, n, &v)) {
		b->oom = 1;
		return NULL;
	}
	a = jarr(b);
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = jobj(b);

		put(b, o, "name", jstr(b, v[i]->name));
		put(b, o, "bytes", jint(b, (int64_t)v[i]->bytes));
		push(b, a, o);
	}
	free(v);
	return a;
}

int cmp_json_check(const struct gp_cmp_settings *s, const struct cmp_side *side,
		   const struct cmp_check *c, size_t n, int over)
{
	struct jb b = { 0 };
	struct json_object *doc = jobj(&b), *devs = jarr(&b);

	put(&b, doc, "schema", jstr(&b, GP_CHECK_SCHEMA));
	put(&b, doc, "gpuprof_version", jstr(&b, GPUPROF_VERSION));
	put(&b, doc, "verdict", jstr(&b, over ? "over" : "ok"));
	put(&b, doc, "metric", jstr(&b, cmp_metric_option(s->metric)));
	put(&b, doc, "limit", limit_json(&b, &s->limit, "percent_of_capacity"));
	put(&b, doc, "inputs", inputs_json(&b, side));
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = unit_json(&b, c[i].u, c[i].value);

		put(&b, o, "what", jstr(&b, c[i].what));
		put(&b, o, "limit", jint(&b, (int64_t)c[i].limit));
		put(&b, o, "over", chk(&b, json_object_new_boolean(c[i].over)));
		put(&b, o, "categories", c[i].u->has_peak && c[i].u->has_cats ?
						 rows_json(&b, c[i].u->cats, c[i].u->ncats) : NULL);
		put(&b, o, "layers",
		    c[i].u->has_peak ? rows_json(&b, c[i].u->layers, c[i].u->nlayers) : NULL);
		push(&b, devs, o);
	}
	put(&b, doc, "devices", devs);
	put(&b, doc, "notes", notes_json(&b, &side->notes));
	return emit(&b, doc, s->out);
}
