/* `gpuprof analyze --json`: the result (result.h) as a gpuprof.analyze/1
 * document (SCHEMA.md). Members in the schema's order; null where the
 * result says not known; numbers with the schema's decimals. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "result.h"

struct jb {
	int oom;
};

static struct json_object *chk(struct jb *b, struct json_object *o)
{
	if (!o)
		b->oom = 1;
	return o;
}

static struct json_object *jint(struct jb *b, int64_t v)
{
	return chk(b, json_object_new_int64(v));
}

static struct json_object *jstr(struct jb *b, const char *s)
{
	return s ? chk(b, json_object_new_string(s)) : NULL;
}

static struct json_object *jbool(struct jb *b, int v)
{
	return chk(b, json_object_new_boolean(v));
}

/* a number as written with that many decimals; null when NaN */
static struct json_object *jnum(struct jb *b, double v, int decimals)
{
	char buf[64];

	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return chk(b, json_object_new_double_s(strtod(buf, NULL), buf));
}

/* times: seconds, 6 decimals */
static struct json_object *jsec(struct jb *b, double t)
{
	return jnum(b, t, 6);
}

static struct json_object *jopt(struct jb *b, struct gp_an_opt v)
{
	return v.known ? jint(b, (int64_t)v.v) : NULL;
}

/* -1: null */
static struct json_object *jint_or_null(struct jb *b, int64_t v)
{
	return v >= 0 ? jint(b, v) : NULL;
}

static struct json_object *jobj(struct jb *b)
{
	return chk(b, json_object_new_object());
}

static struct json_object *jarr(struct jb *b)
{
	return chk(b, json_object_new_array());
}

static void put(struct jb *b, struct json_object *o, const char *k, struct json_object *v)
{
	if (!o) {
		json_object_put(v);
		return;
	}
	if (json_object_object_add(o, k, v))
		b->oom = 1;
}

static void push(struct jb *b, struct json_object *arr, struct json_object *v)
{
	if (!arr) {
		json_object_put(v);
		return;
	}
	if (json_object_array_add(arr, v))
		b->oom = 1;
}

/* [{key: name, bytes, share, count}]; null when not present */
static struct json_object *groups_json(struct jb *b, const struct gp_an_groups *g, const char *key)
{
	struct json_object *arr;

	if (!g->present)
		return NULL;
	arr = jarr(b);
	for (size_t i = 0; i < g->n; i++) {
		struct json_object *o = jobj(b);

		put(b, o, key, jstr(b, g->v[i].name));
		put(b, o, "bytes", jint(b, (int64_t)g->v[i].bytes));
		put(b, o, "share", jnum(b, g->v[i].share, 4));
		put(b, o, "count", jint(b, (int64_t)g->v[i].count));
		push(b, arr, o);
	}
	return arr;
}

static struct json_object *node_json(struct jb *b, const struct gp_an_node *nd)
{
	struct json_object *o = jobj(b);

	put(b, o, "name", jstr(b, nd->name));
	put(b, o, "bytes", jint(b, (int64_t)nd->bytes));
	put(b, o, "share", jnum(b, nd->share, 4));
	put(b, o, "count", jint(b, (int64_t)nd->count));
	if (nd->nchildren) {
		struct json_object *kids = jarr(b);

		for (size_t i = 0; i < nd->nchildren; i++)
			push(b, kids, node_json(b, &nd->children[i]));
		put(b, o, "children", kids);
	}
	return o;
}

static struct json_object *tree_json(struct jb *b, const struct gp_an_node *v, size_t n)
{
	struct json_object *arr = jarr(b);

	for (size_t i = 0; i < n; i++)
		push(b, arr, node_json(b, &v[i]));
	return arr;
}

static struct json_object *categories_json(struct jb *b, const struct gp_an_set *s)
{
	struct json_object *arr;

	if (!s->has_categories)
		return NULL;
	arr = jarr(b);
	for (size_t i = 0; i < s->ncategories; i++) {
		const struct gp_an_category *c = &s->categories[i];
		struct json_object *o = jobj(b);

		put(b, o, "category", jstr(b, c->category));
		put(b, o, "bytes", jint(b, (int64_t)c->bytes));
		put(b, o, "share", jnum(b, c->share, 4));
		put(b, o, "count", jint(b, (int64_t)c->count));
		if (c->by.present)
			put(b, o, "by", groups_json(b, &c->by, "name"));
		push(b, arr, o);
	}
	return arr;
}

static struct json_object *alloc_json(struct jb *b, const struct gp_an_alloc *e)
{
	struct json_object *o = jobj(b);
	char addr[24];

	snprintf(addr, sizeof(addr), "0x%" PRIx64, e->addr);
	put(b, o, "bytes", jint(b, (int64_t)e->bytes));
	put(b, o, "addr", jstr(b, addr));
	put(b, o, "t", jsec(b, e->t));
	put(b, o, "step", jint_or_null(b, e->step));
	put(b, o, "phase", jstr(b, e->phase));
	put(b, o, "layer", jstr(b, e->layer));
	put(b, o, "category", jstr(b, e->category));
	put(b, o, "what", jstr(b, e->what));
	put(b, o, "api", jstr(b, e->api));
	put(b, o, "op", jstr(b, e->op));
	put(b, o, "kind", jstr(b, e->kind));
	put(b, o, "freed_t", jsec(b, e->freed_t));
	return o;
}

/* The members of a Set, into o. */
static void set_json(struct jb *b, struct json_object *o, const struct gp_an_set *s)
{
	struct json_object *arr;

	put(b, o, "live_bytes", jint(b, (int64_t)s->live_bytes));
	put(b, o, "live_allocations", jint(b, (int64_t)s->live_allocations));
	put(b, o, "by_category", categories_json(b, s));
	put(b, o, "by_layer", tree_json(b, s->layers, s->nlayers));
	put(b, o, "by_phase", groups_json(b, &s->by_phase, "phase"));
	put(b, o, "by_op", groups_json(b, &s->by_op, "op"));
	put(b, o, "by_api", groups_json(b, &s->by_api, "api"));
	arr = jarr(b);
	for (size_t i = 0; i < s->ntop; i++)
		push(b, arr, alloc_json(b, &s->top[i]));
	put(b, o, "top", arr);
}

/* ---- per trace ---- */

static struct json_object *trace_json(struct jb *b, const struct gp_an_trace *t)
{
	struct json_object *o = jobj(b), *notes = jarr(b), *d;

	put(b, o, "path", jstr(b, t->path));
	put(b, o, "pid", jint(b, t->pid));
	put(b, o, "cmdline", jstr(b, t->cmdline));
	put(b, o, "hostname", jstr(b, t->hostname));
	put(b, o, "mode", jstr(b, gp_an_mode_names[t->mode]));
	if (t->has_torch) {
		struct json_object *x = jobj(b);

		put(b, x, "version", jstr(b, t->torch_version));
		put(b, x, "alloc_conf", jstr(b, t->torch_alloc_conf));
		put(b, x, "backend", jstr(b, t->torch_backend));
		put(b, o, "torch", x);
	} else {
		put(b, o, "torch", NULL);
	}
	put(b, o, "start_unix_ns", jint(b, t->start_unix_ns));
	put(b, o, "rank", jint_or_null(b, t->rank));
	put(b, o, "complete", jbool(b, t->complete));
	put(b, o, "cut_short", jbool(b, t->cut_short));
	put(b, o, "recovered", jbool(b, t->recovered));
	put(b, o, "clean_exit", t->clean_exit >= 0 ? jbool(b, t->clean_exit) : NULL);
	put(b, o, "events", jint(b, (int64_t)t->events));
	put(b, o, "late_events", jint(b, (int64_t)t->late_events));
	put(b, o, "window_overflows", jint(b, (int64_t)t->window_overflows));
	put(b, o, "max_events_held", jint(b, (int64_t)t->max_events_held));
	put(b, o, "watermarks", jbool(b, t->watermarks));
	d = jobj(b);
	put(b, d, "cupti", jint(b, (int64_t)t->dropped_cupti));
	put(b, d, "host", jint(b, (int64_t)t->dropped_host));
	put(b, d, "marked", jint(b, (int64_t)t->dropped_marked));
	put(b, o, "dropped", d);
	put(b, o, "late_memory_records", jint(b, (int64_t)t->late_memory_records));
	put(b, o, "unmatched_frees", jint(b, (int64_t)t->unmatched_frees));
	put(b, o, "reused_addresses", jint(b, (int64_t)t->reused_addresses));
	put(b, o, "unattributed_allocations", jint(b, (int64_t)t->unattributed_allocations));
	put(b, o, "profiler_windows", jint(b, t->profiler_windows));
	if (t->has_torch_history) {
		struct json_object *h = jobj(b);

		put(b, h, "points", jint(b, (int64_t)t->history_points));
		put(b, h, "marks", jint(b, (int64_t)t->history_marks));
		put(b, h, "complete", jbool(b, t->history_complete));
		put(b, o, "torch_history", h);
	} else {
		put(b, o, "torch_history", NULL);
	}
	for (size_t i = 0; i < t->nnotes; i++)
		push(b, notes, jstr(b, t->notes[i]));
	put(b, o, "notes", notes);
	return o;
}

/* ---- per process and device ---- */

static struct json_object *moment_json(struct jb *b, const struct gp_an_moment *m)
{
	struct json_object *x = jobj(b);

	put(b, x, "gap", jint(b, (int64_t)m->gap));
	put(b, x, "reserved", jint(b, (int64_t)m->reserved));
	put(b, x, "allocated", jint(b, (int64_t)m->allocated));
	put(b, x, "t", jsec(b, m->t));
	put(b, x, "step", jint_or_null(b, m->step));
	put(b, x, "phase", jstr(b, m->phase));
	return x;
}

static struct json_object *amount_json(struct jb *b, const struct gp_an_amount *a)
{
	struct json_object *x = jobj(b);

	put(b, x, "known", jbool(b, a->known));
	put(b, x, "end", jopt(b, a->end));
	put(b, x, "peak", jopt(b, a->peak));
	put(b, x, "peak_t", jsec(b, a->peak_t));
	put(b, x, "source", jstr(b, a->source));
	return x;
}

static struct json_object *summary_json(struct jb *b, const struct gp_an_summary *s)
{
	struct json_object *o = jobj(b), *x, *kinds, *f;

	put(b, o, "allocated", amount_json(b, &s->allocated));
	put(b, o, "reserved", amount_json(b, &s->reserved));
	x = jobj(b);
	put(b, x, "end", jint(b, (int64_t)s->total_end));
	put(b, x, "peak", jint(b, (int64_t)s->total_peak));
	put(b, x, "peak_t", jsec(b, s->total_peak_t));
	put(b, o, "device_total", x);
	if (s->has_other) {
		x = jobj(b);
		put(b, x, "end", jint(b, (int64_t)s->other_end));
		put(b, x, "peak", jint(b, (int64_t)s->other_peak));
		put(b, x, "allocations", jint(b, (int64_t)s->other_allocations));
		put(b, o, "other", x);
	} else {
		put(b, o, "other", NULL);
	}
	put(b, o, "allocations", jint(b, (int64_t)s->allocations));
	put(b, o, "frees", jint(b, (int64_t)s->frees));
	put(b, o, "live_allocations_end", jint(b, (int64_t)s->live_allocations_end));
	put(b, o, "max_live_allocations", jint(b, (int64_t)s->max_live_allocations));
	kinds = jobj(b);
	for (size_t i = 0; i < s->nkinds; i++) {
		x = jobj(b);
		put(b, x, "end", jint(b, (int64_t)s->kinds[i].end));
		put(b, x, "peak", jint(b, (int64_t)s->kinds[i].peak));
		put(b, x, "allocations", jint(b, (int64_t)s->kinds[i].allocations));
		put(b, kinds, s->kinds[i].kind, x);
	}
	put(b, o, "kinds", kinds);
	f = jobj(b);
	put(b, f, "known", jbool(b, s->frag.known));
	put(b, f, "source", jstr(b, s->frag.source));
	put(b, f, "why", jstr(b, s->frag.why));
	put(b, f, "worst", s->frag.has_worst ? moment_json(b, &s->frag.worst) : NULL);
	put(b, f, "at_peak", s->frag.has_at_peak ? moment_json(b, &s->frag.at_peak) : NULL);
	put(b, f, "end", jopt(b, s->frag.end));
	put(b, o, "fragmentation", f);
	return o;
}

static struct json_object *peak_json(struct jb *b, const struct gp_an_device *d)
{
	const struct gp_an_peak *p = &d->peak;
	struct json_object *o;

	if (!d->has_peak)
		return NULL;
	o = jobj(b);
	put(b, o, "what", jstr(b, p->what));
	put(b, o, "bytes", jint(b, (int64_t)p->bytes));
	put(b, o, "t", jsec(b, p->t));
	put(b, o, "step", jint_or_null(b, p->step));
	put(b, o, "phase", jstr(b, p->phase));
	put(b, o, "layer", jstr(b, p->layer));
	put(b, o, "other", jint(b, (int64_t)p->other));
	put(b, o, "device_total", jint(b, (int64_t)p->device_total));
	put(b, o, "device_static", jint(b, (int64_t)p->device_static));
	put(b, o, "reserved", jopt(b, p->reserved));
	set_json(b, o, &p->set);
	return o;
}

static struct json_object *steps_json(struct jb *b, const struct gp_an_device *d)
{
	struct json_object *o = jobj(b), *arr = jarr(b);

	put(b, o, "count", jint(b, (int64_t)d->steps.count));
	put(b, o, "stride", jint(b, d->steps.stride));
	for (size_t i = 0; i < d->steps.nseries; i++) {
		const struct gp_an_step_point *s = &d->steps.series[i];
		struct json_object *e = jobj(b);

		put(b, e, "step", jint(b, s->step));
		put(b, e, "t", jsec(b, s->t));
		put(b, e, "live", jint(b, (int64_t)s->live));
		put(b, e, "reserved", jopt(b, s->reserved));
		put(b, e, "total", jint(b, (int64_t)s->total));
		push(b, arr, e);
	}
	put(b, o, "series", arr);
	return o;
}

static struct json_object *leak_json(struct jb *b, const struct gp_an_leak *lk)
{
	struct json_object *o = jobj(b);

	put(b, o, "verdict", jstr(b, gp_an_leak_verdicts[lk->verdict]));
	put(b, o, "warmup_steps", jint(b, lk->warmup_steps));
	if (lk->verdict == GP_AN_LEAK_NO_STEPS) {
		put(b, o, "why", jstr(b, lk->why));
		return o;
	}
	put(b, o, "points", jint(b, (int64_t)lk->points));
	if (lk->verdict == GP_AN_LEAK_TOO_FEW)
		return o;
	put(b, o, "since_step", jint(b, lk->since_step));
	put(b, o, "last_step", jint(b, lk->last_step));
	put(b, o, "rate_per_step", jnum(b, lk->rate_per_step, 1));
	put(b, o, "rate_per_second", jnum(b, lk->rate_per_second, 1));
	put(b, o, "r2", jnum(b, lk->r2, 4));
	put(b, o, "grew", jint(b, lk->grew));
	put(b, o, "shrank", jint(b, lk->shrank));
	put(b, o, "flat", jint(b, lk->flat));
	put(b, o, "live_first", jint(b, (int64_t)lk->live_first));
	put(b, o, "live_last", jint(b, (int64_t)lk->live_last));
	put(b, o, "steps_until_full", jnum(b, lk->steps_until_full, 0));
	if (lk->has_survivors) {
		const struct gp_an_survivors *s = &lk->survivors;
		struct json_object *sv = jobj(b);

		put(b, sv, "from_step", jint(b, s->from_step));
		put(b, sv, "to_step", jint(b, s->to_step));
		put(b, sv, "bytes", jint(b, (int64_t)s->bytes));
		put(b, sv, "per_step", jnum(b, s->per_step, 1));
		put(b, sv, "allocations", jint(b, (int64_t)s->allocations));
		put(b, sv, "by_layer", tree_json(b, s->layers, s->nlayers));
		put(b, sv, "by_phase", groups_json(b, &s->by_phase, "phase"));
		put(b, sv, "by_op", groups_json(b, &s->by_op, "op"));
		put(b, o, "survivors", sv);
	}
	return o;
}

static struct json_object *oom_json(struct jb *b, const struct gp_an_oom *o)
{
	struct json_object *j = jobj(b), *adv = jarr(b);

	put(b, j, "t", jsec(b, o->t));
	put(b, j, "step", jint_or_null(b, o->step));
	put(b, j, "phase", jstr(b, o->phase));
	put(b, j, "layer", jstr(b, o->layer));
	put(b, j, "op", jstr(b, o->op));
	put(b, j, "api", jstr(b, o->api));
	put(b, j, "tid", jint(b, o->tid));
	put(b, j, "request", jint(b, (int64_t)o->request));
	put(b, j, "free", jopt(b, o->free));
	put(b, j, "total", jopt(b, o->total));
	put(b, j, "result", jint(b, o->result));
	put(b, j, "allocated", jint(b, (int64_t)o->allocated));
	put(b, j, "other", jint(b, (int64_t)o->other));
	put(b, j, "device_total", jint(b, (int64_t)o->device_total));
	put(b, j, "device_static", jint(b, (int64_t)o->device_static));
	put(b, j, "reserved", jopt(b, o->reserved));
	put(b, j, "outside_trace", jopt(b, o->outside_trace));
	put(b, j, "retries", jint(b, o->retries));
	put(b, j, "released_after", jint(b, (int64_t)o->released_after));
	put(b, j, "recovered", jbool(b, o->recovered));
	put(b, j, "detailed", jbool(b, o->detailed));
	if (o->detailed)
		set_json(b, j, &o->set);
	for (size_t i = 0; i < o->nadvice; i++) {
		struct json_object *e = jobj(b);

		put(b, e, "kind", jstr(b, gp_an_advice_kinds[o->advice[i].kind]));
		put(b, e, "text", jstr(b, o->advice[i].text));
		push(b, adv, e);
	}
	put(b, j, "advice", adv);
	return j;
}

static struct json_object *device_json(struct jb *b, const struct gp_an_device *d)
{
	struct json_object *o = jobj(b), *ooms = jarr(b);

	put(b, o, "pid", jint(b, d->pid));
	put(b, o, "trace", jint(b, (int64_t)d->trace));
	put(b, o, "device", jint(b, d->device));
	put(b, o, "name", jstr(b, d->name));
	put(b, o, "uuid", jstr(b, d->uuid));
	put(b, o, "capacity", jopt(b, d->capacity));
	put(b, o, "mode", jstr(b, gp_an_mode_names[d->mode]));
	put(b, o, "summary", summary_json(b, &d->summary));
	put(b, o, "peak", peak_json(b, d));
	put(b, o, "steps", steps_json(b, d));
	put(b, o, "leak", leak_json(b, &d->leak));
	for (size_t i = 0; i < d->nooms; i++)
		push(b, ooms, oom_json(b, &d->ooms[i]));
	put(b, o, "ooms", ooms);
	put(b, o, "oom_count", jint(b, (int64_t)d->oom_count));
	return o;
}

static struct json_object *gpu_json(struct jb *b, const struct gp_an_gpu *g)
{
	struct json_object *o = jobj(b), *by = jarr(b);

	put(b, o, "uuid", jstr(b, g->uuid));
	put(b, o, "name", jstr(b, g->name));
	put(b, o, "capacity", jopt(b, g->capacity));
	put(b, o, "peak", jint(b, (int64_t)g->peak));
	put(b, o, "peak_t", jsec(b, g->peak_t));
	for (size_t i = 0; i < g->nby_process; i++) {
		struct json_object *e = jobj(b);

		put(b, e, "pid", jint(b, g->by_process[i].pid));
		put(b, e, "device", jint(b, g->by_process[i].device));
		put(b, e, "bytes", jint(b, (int64_t)g->by_process[i].bytes));
		push(b, by, e);
	}
	put(b, o, "by_process", by);
	return o;
}

static struct json_object *doc_json(struct jb *b, const struct gp_an_result *r)
{
	struct json_object *doc = jobj(b), *traces = jarr(b), *devs = jarr(b), *gpus = jarr(b);
	struct json_object *opts = jobj(b);

	put(b, doc, "schema", jstr(b, GP_AN_SCHEMA));
	put(b, doc, "gpuprof_version", jstr(b, r->version));
	put(b, opts, "top", jint(b, r->top));
	put(b, opts, "device", r->device >= 0 ? jint(b, r->device) : NULL);
	put(b, opts, "process", jint_or_null(b, r->process));
	put(b, doc, "options", opts);
	put(b, doc, "time_origin_ns", jint(b, r->time_origin_ns));
	for (size_t i = 0; i < r->ntraces; i++)
		push(b, traces, trace_json(b, &r->traces[i]));
	put(b, doc, "traces", traces);
	for (size_t i = 0; i < r->ndevices; i++)
		push(b, devs, device_json(b, &r->devices[i]));
	put(b, doc, "devices", devs);
	for (size_t i = 0; i < r->ngpus; i++)
		push(b, gpus, gpu_json(b, &r->gpus[i]));
	put(b, doc, "gpus", gpus);
	return doc;
}

int gp_an_render_json(const struct gp_an_result *r, FILE *out)
{
	struct jb b = { 0 };
	struct json_object *doc = doc_json(&b, r);
	const char *txt;
	int rc = 0;

	if (b.oom) {
		json_object_put(doc);
		return -ENOMEM;
	}
	txt = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						     JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!txt)
		rc = -ENOMEM;
	else if (fputs(txt, out) < 0 || fputc('\n', out) == EOF)
		rc = -EIO;
	json_object_put(doc);
	return rc;
}
