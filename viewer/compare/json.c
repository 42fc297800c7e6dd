/* The reports for machines: gpuprof.compare/1 and gpuprof.check/1
 * (README.md in this directory). Every row that changed is listed, not only
 * the --top ones the text shows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmp.h"
#include "viewer/render/json_build.h"

static struct json_object *notes_json(struct gp_jb *b, const struct cmp_notes *n)
{
	struct json_object *a = gp_jb_arr(b);

	for (size_t i = 0; i < n->n; i++)
		gp_jb_push(b, a, gp_jb_str(b, n->s[i]));
	return a;
}

static struct json_object *inputs_json(struct gp_jb *b, const struct cmp_side *s)
{
	struct json_object *o = gp_jb_obj(b), *a = gp_jb_arr(b);

	for (size_t i = 0; i < s->ninputs; i++)
		gp_jb_push(b, a, gp_jb_str(b, s->inputs[i]));
	gp_jb_put(b, o, "inputs", a);
	gp_jb_put(b, o, "processes", gp_jb_int(b, (int64_t)s->nprocs));
	return o;
}

/* null, or the program did not get past an out-of-memory error: how many
 * such failures, whether --allow-oom let it pass, the first one and the
 * line the text report says */
static struct json_object *oom_json(struct gp_jb *b, const struct cmp_unit *u, int allow_oom)
{
	struct json_object *o;
	char line[1024];

	if (!u->oom_fatal)
		return NULL;
	o = gp_jb_obj(b);
	gp_jb_put(b, o, "fatal", gp_jb_int(b, (int64_t)u->oom_fatal));
	gp_jb_put(b, o, "allowed", gp_jb_chk(b, json_object_new_boolean(allow_oom)));
	gp_jb_put(b, o, "guessed", gp_jb_chk(b, json_object_new_boolean(u->oom_fatal_guessed)));
	gp_jb_put(b, o, "step", u->oom_lead && u->oom_lead->step >= 0 ? gp_jb_int(b, u->oom_lead->step) : NULL);
	gp_jb_put(b, o, "request", u->oom_lead ? gp_jb_int(b, (int64_t)u->oom_lead->request) : NULL);
	gp_jb_put(b, o, "phase", gp_jb_str(b, u->oom_lead ? u->oom_lead->phase : NULL));
	gp_jb_put(b, o, "layer", gp_jb_str(b, u->oom_lead ? u->oom_lead->layer : NULL));
	gp_jb_put(b, o, "raised", gp_jb_chk(b, json_object_new_boolean(u->oom_lead && u->oom_lead->raised)));
	cmp_oom_line(line, sizeof(line), u, 0, allow_oom);
	gp_jb_put(b, o, "line", gp_jb_str(b, line));
	return o;
}

static struct json_object *unit_json(struct gp_jb *b, const struct cmp_unit *u, uint64_t value,
				     int allow_oom)
{
	struct json_object *o = gp_jb_obj(b), *pk;

	gp_jb_put(b, o, "input", gp_jb_str(b, u->input));
	gp_jb_put(b, o, "trace", gp_jb_str(b, u->tr->path));
	gp_jb_put(b, o, "pid", gp_jb_int(b, u->dev->pid));
	gp_jb_put(b, o, "rank", u->tr->rank >= 0 ? gp_jb_int(b, u->tr->rank) : NULL);
	gp_jb_put(b, o, "device", gp_jb_int(b, u->dev->device));
	gp_jb_put(b, o, "cmdline", gp_jb_str(b, u->tr->cmdline));
	gp_jb_put(b, o, "hostname", gp_jb_str(b, u->tr->hostname));
	gp_jb_put(b, o, "mode", gp_jb_str(b, gp_an_mode_names[u->dev->mode]));
	gp_jb_put(b, o, "value", gp_jb_int(b, (int64_t)value));
	gp_jb_put(b, o, "out_of_memory", oom_json(b, u, allow_oom));
	if (!u->dev->has_peak) {
		gp_jb_put(b, o, "peak", NULL);
		return o;
	}
	pk = gp_jb_obj(b);
	gp_jb_put(b, pk, "what", gp_jb_str(b, u->dev->peak.what));
	gp_jb_put(b, pk, "bytes", gp_jb_int(b, (int64_t)u->dev->peak.bytes));
	gp_jb_put(b, pk, "t", gp_jb_num(b, u->dev->peak.t, 6));
	gp_jb_put(b, pk, "step", u->dev->peak.step >= 0 ? gp_jb_int(b, u->dev->peak.step) : NULL);
	gp_jb_put(b, pk, "step_when", u->dev->peak.step >= 0 ? gp_jb_str(b, gp_an_step_when_names[u->dev->peak.step_when])
							 : NULL);
	gp_jb_put(b, pk, "phase", gp_jb_str(b, u->dev->peak.phase));
	gp_jb_put(b, pk, "layer", gp_jb_str(b, u->dev->peak.layer));
	gp_jb_put(b, pk, "live_bytes", gp_jb_int(b, (int64_t)u->dev->peak.set.live_bytes));
	gp_jb_put(b, o, "peak", pk);
	return o;
}

static struct json_object *changes_json(struct gp_jb *b, const struct cmp_change *c, size_t n)
{
	struct json_object *a = gp_jb_arr(b);

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = gp_jb_obj(b);

		gp_jb_put(b, o, "name", gp_jb_str(b, c[i].name));
		gp_jb_put(b, o, "base", gp_jb_int(b, (int64_t)c[i].base));
		gp_jb_put(b, o, "new", gp_jb_int(b, (int64_t)c[i].new_));
		gp_jb_put(b, o, "change", gp_jb_int(b, c[i].delta));
		gp_jb_push(b, a, o);
	}
	return a;
}

static struct json_object *achanges_json(struct gp_jb *b, const struct cmp_achange *c, size_t n)
{
	struct json_object *a = gp_jb_arr(b);

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = gp_jb_obj(b);
		const struct gp_an_alloc *x = c[i].a;

		gp_jb_put(b, o, "layer", gp_jb_str(b, x->layer));
		gp_jb_put(b, o, "category", gp_jb_str(b, x->category));
		gp_jb_put(b, o, "phase", gp_jb_str(b, x->phase));
		gp_jb_put(b, o, "op", gp_jb_str(b, x->op));
		gp_jb_put(b, o, "api", gp_jb_str(b, x->api));
		gp_jb_put(b, o, "what", gp_jb_str(b, x->what));
		gp_jb_put(b, o, "count", gp_jb_int(b, (int64_t)c[i].count));
		gp_jb_put(b, o, "base", c[i].base_known ? gp_jb_int(b, (int64_t)c[i].base) : NULL);
		gp_jb_put(b, o, "new", c[i].new_known ? gp_jb_int(b, (int64_t)c[i].new_) : NULL);
		gp_jb_put(b, o, "base_at_most", c[i].base_known ? NULL : gp_jb_int(b, (int64_t)c[i].base_below));
		gp_jb_put(b, o, "new_at_most", c[i].new_known ? NULL : gp_jb_int(b, (int64_t)c[i].new_below));
		gp_jb_put(b, o, "change", gp_jb_int(b, c[i].delta));
		gp_jb_put(b, o, "exact", gp_jb_chk(b, json_object_new_boolean(c[i].base_known && c[i].new_known)));
		gp_jb_push(b, a, o);
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

static struct json_object *limit_json(struct gp_jb *b, const struct gp_cmp_limit *l, const char *pct_name)
{
	struct json_object *o = gp_jb_obj(b);

	gp_jb_put(b, o, pct_name, l->has_percent ? gp_jb_num(b, l->percent, 3) : NULL);
	gp_jb_put(b, o, "bytes", l->has_bytes ? gp_jb_int(b, (int64_t)l->bytes) : NULL);
	return o;
}

/* doc written to out, or handed over to *json when the caller asked for
 * the document (gp_cmp_settings.json) */
static int emit(struct gp_jb *b, struct json_object *doc, FILE *out, struct json_object **json)
{
	const char *s;
	int rc = 0;

	if (b->oom || !doc) {
		json_object_put(doc);
		return -ENOMEM;
	}
	if (json) {
		*json = doc;
		return 0;
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
	struct gp_jb b = { 0 };
	struct json_object *doc = gp_jb_obj(&b), *pairs = gp_jb_arr(&b), *notes = gp_jb_arr(&b);

	gp_jb_put(&b, doc, "schema", gp_jb_str(&b, GP_CMP_SCHEMA));
	gp_jb_put(&b, doc, "gpuprof_version", gp_jb_str(&b, GPUPROF_VERSION));
	gp_jb_put(&b, doc, "verdict", gp_jb_str(&b, over ? "regression" : "ok"));
	gp_jb_put(&b, doc, "metric", gp_jb_str(&b, cmp_metric_option(s->metric)));
	gp_jb_put(&b, doc, "limit", limit_json(&b, &s->limit, "percent"));
	gp_jb_put(&b, doc, "base", inputs_json(&b, base));
	gp_jb_put(&b, doc, "new", inputs_json(&b, new_));
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = gp_jb_obj(&b);
		int both = p[i].b && p[i].n;

		gp_jb_put(&b, o, "device", gp_jb_int(&b, (p[i].b ? p[i].b : p[i].n)->dev->device));
		gp_jb_put(&b, o, "verdict", gp_jb_str(&b, verdict_id(p[i].verdict)));
		gp_jb_put(&b, o, "matched_by", gp_jb_str(&b, p[i].matched_by));
		gp_jb_put(&b, o, "what", gp_jb_str(&b, p[i].what));
		gp_jb_put(&b, o, "base", p[i].b ? unit_json(&b, p[i].b, p[i].vb, s->allow_oom) : NULL);
		gp_jb_put(&b, o, "new", p[i].n ? unit_json(&b, p[i].n, p[i].vn, s->allow_oom) : NULL);
		gp_jb_put(&b, o, "change", both ? gp_jb_int(&b, p[i].delta) : NULL);
		gp_jb_put(&b, o, "change_percent", both && p[i].has_percent ? gp_jb_num(&b, p[i].percent, 4) : NULL);
		gp_jb_put(&b, o, "allowed", both ? gp_jb_int(&b, (int64_t)p[i].allowed) : NULL);
		gp_jb_put(&b, o, "categories", p[i].has_breakdown && p[i].b->has_cats && p[i].n->has_cats ?
						 changes_json(&b, p[i].cats, p[i].ncats) : NULL);
		gp_jb_put(&b, o, "layers", p[i].has_breakdown ? changes_json(&b, p[i].layers, p[i].nlayers) : NULL);
		gp_jb_put(&b, o, "allocations",
		    p[i].has_breakdown ? achanges_json(&b, p[i].allocs, p[i].nallocs) : NULL);
		gp_jb_put(&b, o, "notes", notes_json(&b, &p[i].notes));
		gp_jb_push(&b, pairs, o);
	}
	gp_jb_put(&b, doc, "pairs", pairs);
	for (size_t i = 0; i < base->notes.n; i++)
		gp_jb_push(&b, notes, gp_jb_str(&b, base->notes.s[i]));
	for (size_t i = 0; i < new_->notes.n; i++)
		gp_jb_push(&b, notes, gp_jb_str(&b, new_->notes.s[i]));
	gp_jb_put(&b, doc, "notes", notes);
	return emit(&b, doc, s->out, s->json);
}

static struct json_object *rows_json(struct gp_jb *b, const struct cmp_row *r, size_t n)
{
	const struct cmp_row **v;
	struct json_object *a;

	if (cmp_rows_sorted(r, n, &v)) {
		b->oom = 1;
		return NULL;
	}
	a = gp_jb_arr(b);
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = gp_jb_obj(b);

		gp_jb_put(b, o, "name", gp_jb_str(b, v[i]->name));
		gp_jb_put(b, o, "bytes", gp_jb_int(b, (int64_t)v[i]->bytes));
		gp_jb_push(b, a, o);
	}
	free(v);
	return a;
}

int cmp_json_check(const struct gp_cmp_settings *s, const struct cmp_side *side,
		   const struct cmp_check *c, size_t n, int over)
{
	struct gp_jb b = { 0 };
	struct json_object *doc = gp_jb_obj(&b), *devs = gp_jb_arr(&b);

	gp_jb_put(&b, doc, "schema", gp_jb_str(&b, GP_CHECK_SCHEMA));
	gp_jb_put(&b, doc, "gpuprof_version", gp_jb_str(&b, GPUPROF_VERSION));
	gp_jb_put(&b, doc, "verdict", gp_jb_str(&b, over ? "over" : "ok"));
	gp_jb_put(&b, doc, "metric", gp_jb_str(&b, cmp_metric_option(s->metric)));
	gp_jb_put(&b, doc, "limit", limit_json(&b, &s->limit, "percent_of_capacity"));
	gp_jb_put(&b, doc, "inputs", inputs_json(&b, side));
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = unit_json(&b, c[i].u, c[i].value, s->allow_oom);

		gp_jb_put(&b, o, "what", gp_jb_str(&b, c[i].what));
		gp_jb_put(&b, o, "limit", gp_jb_int(&b, (int64_t)c[i].limit));
		gp_jb_put(&b, o, "over", gp_jb_chk(&b, json_object_new_boolean(c[i].over)));
		gp_jb_put(&b, o, "categories", c[i].u->dev->has_peak && c[i].u->has_cats ?
						 rows_json(&b, c[i].u->cats, c[i].u->ncats) : NULL);
		gp_jb_put(&b, o, "layers",
		    c[i].u->dev->has_peak ? rows_json(&b, c[i].u->layers, c[i].u->nlayers) : NULL);
		gp_jb_push(&b, devs, o);
	}
	gp_jb_put(&b, doc, "devices", devs);
	gp_jb_put(&b, doc, "notes", notes_json(&b, &side->notes));
	return emit(&b, doc, s->out, s->json);
}
