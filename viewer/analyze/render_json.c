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
#include "viewer/render/json_build.h"

/* times: seconds, 6 decimals */
static struct json_object *jsec(struct gp_jb *b, double t)
{
	return gp_jb_num(b, t, 6);
}

static struct json_object *jopt(struct gp_jb *b, struct gp_an_opt v)
{
	return v.known ? gp_jb_int(b, (int64_t)v.v) : NULL;
}

/* -1: null */
static struct json_object *jint_or_null(struct gp_jb *b, int64_t v)
{
	return v >= 0 ? gp_jb_int(b, v) : NULL;
}

/* "step" and "step_when" of a moment (result.h, enum gp_an_step_when):
 * both null where the process marked no step. */
static void put_step(struct gp_jb *b, struct json_object *o, const char *key, const char *when_key,
		     int64_t step, int when)
{
	gp_jb_put(b, o, key, jint_or_null(b, step));
	gp_jb_put(b, o, when_key, step >= 0 && when >= 0 && when < GP_AN_STEP_WHEN_N
					  ? gp_jb_str(b, gp_an_step_when_names[when]) : NULL);
}

/* [{key: name, bytes, share, count}]; null when not present */
static struct json_object *groups_json(struct gp_jb *b, const struct gp_an_groups *g, const char *key)
{
	struct json_object *arr;

	if (!g->present)
		return NULL;
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < g->n; i++) {
		struct json_object *o = gp_jb_obj(b);

		gp_jb_put(b, o, key, gp_jb_str(b, g->v[i].name));
		gp_jb_put(b, o, "bytes", gp_jb_int(b, (int64_t)g->v[i].bytes));
		gp_jb_put(b, o, "share", gp_jb_num(b, g->v[i].share, 4));
		gp_jb_put(b, o, "count", gp_jb_int(b, (int64_t)g->v[i].count));
		gp_jb_push(b, arr, o);
	}
	return arr;
}

static struct json_object *node_json(struct gp_jb *b, const struct gp_an_node *nd)
{
	struct json_object *o = gp_jb_obj(b);

	gp_jb_put(b, o, "name", gp_jb_str(b, nd->name));
	gp_jb_put(b, o, "bytes", gp_jb_int(b, (int64_t)nd->bytes));
	gp_jb_put(b, o, "share", gp_jb_num(b, nd->share, 4));
	gp_jb_put(b, o, "count", gp_jb_int(b, (int64_t)nd->count));
	if (nd->alike.n) {
		struct json_object *run = gp_jb_obj(b);

		gp_jb_put(b, run, "siblings", gp_jb_int(b, (int64_t)nd->alike.n));
		gp_jb_put(b, run, "label", gp_jb_str(b, nd->alike.label));
		gp_jb_put(b, run, "bytes", gp_jb_int(b, (int64_t)nd->alike.bytes));
		gp_jb_put(b, run, "share", gp_jb_num(b, nd->alike.share, 4));
		gp_jb_put(b, run, "count", gp_jb_int(b, (int64_t)nd->alike.count));
		gp_jb_put(b, run, "min_bytes", gp_jb_int(b, (int64_t)nd->alike.min));
		gp_jb_put(b, run, "max_bytes", gp_jb_int(b, (int64_t)nd->alike.max));
		gp_jb_put(b, o, "alike", run);
	}
	if (nd->nchildren) {
		struct json_object *kids = gp_jb_arr(b);

		for (size_t i = 0; i < nd->nchildren; i++)
			gp_jb_push(b, kids, node_json(b, &nd->children[i]));
		gp_jb_put(b, o, "children", kids);
	}
	return o;
}

static struct json_object *tree_json(struct gp_jb *b, const struct gp_an_node *v, size_t n)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < n; i++)
		gp_jb_push(b, arr, node_json(b, &v[i]));
	return arr;
}

static struct json_object *categories_json(struct gp_jb *b, const struct gp_an_set *s)
{
	struct json_object *arr;

	if (!s->has_categories)
		return NULL;
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < s->ncategories; i++) {
		const struct gp_an_category *c = &s->categories[i];
		struct json_object *o = gp_jb_obj(b);

		gp_jb_put(b, o, "category", gp_jb_str(b, c->category));
		gp_jb_put(b, o, "bytes", gp_jb_int(b, (int64_t)c->bytes));
		gp_jb_put(b, o, "share", gp_jb_num(b, c->share, 4));
		gp_jb_put(b, o, "count", gp_jb_int(b, (int64_t)c->count));
		if (c->by.present)
			gp_jb_put(b, o, "by", groups_json(b, &c->by, "name"));
		gp_jb_push(b, arr, o);
	}
	return arr;
}

static struct json_object *alloc_json(struct gp_jb *b, const struct gp_an_alloc *e)
{
	struct json_object *o = gp_jb_obj(b);
	char addr[24];

	snprintf(addr, sizeof(addr), "0x%" PRIx64, e->addr);
	gp_jb_put(b, o, "bytes", gp_jb_int(b, (int64_t)e->bytes));
	gp_jb_put(b, o, "addr", gp_jb_str(b, addr));
	gp_jb_put(b, o, "t", jsec(b, e->t));
	put_step(b, o, "step", "step_when", e->step, e->step_when);
	gp_jb_put(b, o, "phase", gp_jb_str(b, e->phase));
	gp_jb_put(b, o, "layer", gp_jb_str(b, e->layer));
	gp_jb_put(b, o, "category", gp_jb_str(b, e->category));
	gp_jb_put(b, o, "what", gp_jb_str(b, e->what));
	gp_jb_put(b, o, "api", gp_jb_str(b, e->api));
	gp_jb_put(b, o, "library", gp_jb_str(b, e->library));
	gp_jb_put(b, o, "op", gp_jb_str(b, e->op));
	gp_jb_put(b, o, "kind", gp_jb_str(b, e->kind));
	gp_jb_put(b, o, "line", gp_jb_str(b, e->line));
	gp_jb_put(b, o, "requested", jopt(b, e->requested));
	gp_jb_put(b, o, "freed_t", jsec(b, e->freed_t));
	return o;
}

/* by_line: null where the trace has no Python stacks */
static struct json_object *lines_json(struct gp_jb *b, const struct gp_an_lines *l)
{
	struct json_object *arr;

	if (!l->present)
		return NULL;
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < l->n; i++) {
		const struct gp_an_line *e = &l->v[i];
		struct json_object *o = gp_jb_obj(b), *st = gp_jb_arr(b);

		gp_jb_put(b, o, "name", gp_jb_str(b, e->name));
		gp_jb_put(b, o, "file", gp_jb_str(b, e->file));
		gp_jb_put(b, o, "line", jint_or_null(b, e->line));
		gp_jb_put(b, o, "function", gp_jb_str(b, e->function));
		gp_jb_put(b, o, "bytes", gp_jb_int(b, (int64_t)e->bytes));
		gp_jb_put(b, o, "share", gp_jb_num(b, e->share, 4));
		gp_jb_put(b, o, "count", gp_jb_int(b, (int64_t)e->count));
		for (size_t k = 0; k < e->nstack; k++)
			gp_jb_push(b, st, gp_jb_str(b, e->stack[k]));
		gp_jb_put(b, o, "stack", st);
		gp_jb_put(b, o, "library_frames", gp_jb_int(b, (int64_t)e->library_frames));
		gp_jb_push(b, arr, o);
	}
	return arr;
}

/* The members of a Set, into o. */
static void set_json(struct gp_jb *b, struct json_object *o, const struct gp_an_set *s)
{
	struct json_object *arr;

	gp_jb_put(b, o, "live_bytes", gp_jb_int(b, (int64_t)s->live_bytes));
	gp_jb_put(b, o, "live_allocations", gp_jb_int(b, (int64_t)s->live_allocations));
	gp_jb_put(b, o, "by_category", categories_json(b, s));
	gp_jb_put(b, o, "by_layer", tree_json(b, s->layers, s->nlayers));
	gp_jb_put(b, o, "by_phase", groups_json(b, &s->by_phase, "phase"));
	gp_jb_put(b, o, "by_op", groups_json(b, &s->by_op, "op"));
	gp_jb_put(b, o, "by_api", groups_json(b, &s->by_api, "api"));
	gp_jb_put(b, o, "by_line", lines_json(b, &s->by_line));
	arr = gp_jb_obj(b);
	gp_jb_put(b, arr, "bytes", gp_jb_int(b, (int64_t)s->attributed.bytes));
	gp_jb_put(b, arr, "layer", gp_jb_int(b, (int64_t)s->attributed.layer));
	gp_jb_put(b, arr, "line", gp_jb_int(b, (int64_t)s->attributed.line));
	gp_jb_put(b, arr, "either", gp_jb_int(b, (int64_t)s->attributed.either));
	gp_jb_put(b, o, "attributed", arr);
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < s->ntop; i++)
		gp_jb_push(b, arr, alloc_json(b, &s->top[i]));
	gp_jb_put(b, o, "top", arr);
}

/* ---- per trace ---- */

static struct json_object *trace_json(struct gp_jb *b, const struct gp_an_trace *t)
{
	struct json_object *o = gp_jb_obj(b), *notes = gp_jb_arr(b), *d;

	gp_jb_put(b, o, "path", gp_jb_str(b, t->path));
	gp_jb_put(b, o, "pid", gp_jb_int(b, t->pid));
	gp_jb_put(b, o, "cmdline", gp_jb_str(b, t->cmdline));
	gp_jb_put(b, o, "hostname", gp_jb_str(b, t->hostname));
	gp_jb_put(b, o, "mode", gp_jb_str(b, gp_an_mode_names[t->mode]));
	if (t->has_torch) {
		struct json_object *x = gp_jb_obj(b);

		gp_jb_put(b, x, "version", gp_jb_str(b, t->torch_version));
		gp_jb_put(b, x, "alloc_conf", gp_jb_str(b, t->torch_alloc_conf));
		gp_jb_put(b, x, "backend", gp_jb_str(b, t->torch_backend));
		gp_jb_put(b, o, "torch", x);
	} else {
		gp_jb_put(b, o, "torch", NULL);
	}
	gp_jb_put(b, o, "start_unix_ns", gp_jb_int(b, t->start_unix_ns));
	gp_jb_put(b, o, "rank", jint_or_null(b, t->rank));
	gp_jb_put(b, o, "world_size", jint_or_null(b, t->world_size));
	gp_jb_put(b, o, "local_rank", jint_or_null(b, t->local_rank));
	gp_jb_put(b, o, "local_world_size", jint_or_null(b, t->local_world_size));
	gp_jb_put(b, o, "job_start_unix_ns", jint_or_null(b, t->job_start_unix_ns));
	gp_jb_put(b, o, "complete", gp_jb_bool(b, t->complete));
	gp_jb_put(b, o, "cut_short", gp_jb_bool(b, t->cut_short));
	gp_jb_put(b, o, "recovered", gp_jb_bool(b, t->recovered));
	gp_jb_put(b, o, "clean_exit", t->clean_exit >= 0 ? gp_jb_bool(b, t->clean_exit) : NULL);
	gp_jb_put(b, o, "end_signal", t->end_signal ? gp_jb_int(b, t->end_signal) : NULL);
	gp_jb_put(b, o, "end_t", isnan(t->end_t) ? NULL : jsec(b, t->end_t));
	gp_jb_put(b, o, "events", gp_jb_int(b, (int64_t)t->events));
	gp_jb_put(b, o, "late_events", gp_jb_int(b, (int64_t)t->late_events));
	gp_jb_put(b, o, "window_overflows", gp_jb_int(b, (int64_t)t->window_overflows));
	gp_jb_put(b, o, "max_events_held", gp_jb_int(b, (int64_t)t->max_events_held));
	gp_jb_put(b, o, "watermarks", gp_jb_bool(b, t->watermarks));
	d = gp_jb_obj(b);
	gp_jb_put(b, d, "cupti", gp_jb_int(b, (int64_t)t->dropped_cupti));
	gp_jb_put(b, d, "host", gp_jb_int(b, (int64_t)t->dropped_host));
	gp_jb_put(b, d, "marked", gp_jb_int(b, (int64_t)t->dropped_marked));
	gp_jb_put(b, o, "dropped", d);
	gp_jb_put(b, o, "late_memory_records", gp_jb_int(b, (int64_t)t->late_memory_records));
	gp_jb_put(b, o, "unmatched_frees", gp_jb_int(b, (int64_t)t->unmatched_frees));
	gp_jb_put(b, o, "reused_addresses", gp_jb_int(b, (int64_t)t->reused_addresses));
	gp_jb_put(b, o, "unattributed_allocations", gp_jb_int(b, (int64_t)t->unattributed_allocations));
	gp_jb_put(b, o, "profiler_windows", gp_jb_int(b, t->profiler_windows));
	if (t->has_torch_history) {
		struct json_object *h = gp_jb_obj(b);

		gp_jb_put(b, h, "points", gp_jb_int(b, (int64_t)t->history_points));
		gp_jb_put(b, h, "marks", gp_jb_int(b, (int64_t)t->history_marks));
		gp_jb_put(b, h, "complete", gp_jb_bool(b, t->history_complete));
		gp_jb_put(b, o, "torch_history", h);
	} else {
		gp_jb_put(b, o, "torch_history", NULL);
	}
	if (t->has_hook) {
		struct json_object *h = gp_jb_obj(b);

		gp_jb_put(b, h, "attached", gp_jb_bool(b, t->hook.attached));
		gp_jb_put(b, h, "stacks", gp_jb_bool(b, t->hook.stacks));
		gp_jb_put(b, h, "why", gp_jb_str(b, t->hook.why));
		gp_jb_put(b, h, "allocated_before", gp_jb_int(b, (int64_t)t->hook.allocated_before));
		gp_jb_put(b, h, "reserved_before", gp_jb_int(b, (int64_t)t->hook.reserved_before));
		gp_jb_put(b, h, "sizes_guessed", gp_jb_int(b, (int64_t)t->hook.sizes_guessed));
		gp_jb_put(b, o, "allocator_hook", h);
	} else {
		gp_jb_put(b, o, "allocator_hook", NULL);
	}
	for (size_t i = 0; i < t->nnotes; i++)
		gp_jb_push(b, notes, gp_jb_str(b, t->notes[i]));
	gp_jb_put(b, o, "notes", notes);
	return o;
}

/* ---- per process and device ---- */

static struct json_object *moment_json(struct gp_jb *b, const struct gp_an_moment *m)
{
	struct json_object *x = gp_jb_obj(b);

	gp_jb_put(b, x, "gap", gp_jb_int(b, (int64_t)m->gap));
	gp_jb_put(b, x, "reserved", gp_jb_int(b, (int64_t)m->reserved));
	gp_jb_put(b, x, "allocated", gp_jb_int(b, (int64_t)m->allocated));
	gp_jb_put(b, x, "t", jsec(b, m->t));
	put_step(b, x, "step", "step_when", m->step, m->step_when);
	gp_jb_put(b, x, "phase", gp_jb_str(b, m->phase));
	return x;
}

static struct json_object *amount_json(struct gp_jb *b, const struct gp_an_amount *a)
{
	struct json_object *x = gp_jb_obj(b);

	gp_jb_put(b, x, "known", gp_jb_bool(b, a->known));
	gp_jb_put(b, x, "end", jopt(b, a->end));
	gp_jb_put(b, x, "peak", jopt(b, a->peak));
	gp_jb_put(b, x, "peak_t", jsec(b, a->peak_t));
	gp_jb_put(b, x, "source", gp_jb_str(b, a->source));
	return x;
}

/* The cache's fragmentation (summary.cache.fragmentation). */
static struct json_object *split_json(struct gp_jb *b, const struct gp_an_split *sp)
{
	struct json_object *o = gp_jb_obj(b), *w = NULL;

	gp_jb_put(b, o, "known", gp_jb_bool(b, sp->known));
	gp_jb_put(b, o, "why", gp_jb_str(b, sp->why));
	gp_jb_put(b, o, "expandable_segments", gp_jb_bool(b, sp->expandable));
	gp_jb_put(b, o, "segments", sp->known ? gp_jb_int(b, (int64_t)sp->segments) : NULL);
	gp_jb_put(b, o, "bytes", sp->known ? gp_jb_int(b, (int64_t)sp->bytes) : NULL);
	if (sp->has_worst) {
		w = gp_jb_obj(b);
		gp_jb_put(b, w, "cached", gp_jb_int(b, (int64_t)sp->worst.cached));
		gp_jb_put(b, w, "block", gp_jb_int(b, (int64_t)sp->worst.block));
		gp_jb_put(b, w, "segment", gp_jb_int(b, (int64_t)sp->worst.segment));
		gp_jb_put(b, w, "reserved", gp_jb_int(b, (int64_t)sp->worst.reserved));
		gp_jb_put(b, w, "allocated", gp_jb_int(b, (int64_t)sp->worst.allocated));
		gp_jb_put(b, w, "t", jsec(b, sp->worst.t));
		put_step(b, w, "step", "step_when", sp->worst.step, sp->worst.step_when);
		gp_jb_put(b, w, "phase", gp_jb_str(b, sp->worst.phase));
	}
	gp_jb_put(b, o, "worst", w);
	return o;
}

/* Reserved less allocated: the cache; with_split: and its fragmentation
 * (summary.cache; summary.fragmentation is the same, without it). */
static struct json_object *cache_json(struct gp_jb *b, const struct gp_an_summary *s, int with_split)
{
	struct json_object *f = gp_jb_obj(b);

	gp_jb_put(b, f, "known", gp_jb_bool(b, s->frag.known));
	gp_jb_put(b, f, "source", gp_jb_str(b, s->frag.source));
	gp_jb_put(b, f, "why", gp_jb_str(b, s->frag.why));
	gp_jb_put(b, f, "worst", s->frag.has_worst ? moment_json(b, &s->frag.worst) : NULL);
	gp_jb_put(b, f, "at_peak", s->frag.has_at_peak ? moment_json(b, &s->frag.at_peak) : NULL);
	gp_jb_put(b, f, "end", jopt(b, s->frag.end));
	if (with_split)
		gp_jb_put(b, f, "fragmentation", split_json(b, &s->split));
	return f;
}

static struct json_object *summary_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	struct json_object *o = gp_jb_obj(b), *x, *kinds;

	gp_jb_put(b, o, "allocated", amount_json(b, &s->allocated));
	gp_jb_put(b, o, "reserved", amount_json(b, &s->reserved));
	x = gp_jb_obj(b);
	gp_jb_put(b, x, "end", gp_jb_int(b, (int64_t)s->total_end));
	gp_jb_put(b, x, "peak", gp_jb_int(b, (int64_t)s->total_peak));
	gp_jb_put(b, x, "peak_t", jsec(b, s->total_peak_t));
	gp_jb_put(b, o, "device_total", x);
	if (s->has_other) {
		x = gp_jb_obj(b);
		gp_jb_put(b, x, "end", gp_jb_int(b, (int64_t)s->other_end));
		gp_jb_put(b, x, "peak", gp_jb_int(b, (int64_t)s->other_peak));
		gp_jb_put(b, x, "allocations", gp_jb_int(b, (int64_t)s->other_allocations));
		gp_jb_put(b, o, "other", x);
	} else {
		gp_jb_put(b, o, "other", NULL);
	}
	gp_jb_put(b, o, "allocations", gp_jb_int(b, (int64_t)s->allocations));
	gp_jb_put(b, o, "frees", gp_jb_int(b, (int64_t)s->frees));
	gp_jb_put(b, o, "live_allocations_end", gp_jb_int(b, (int64_t)s->live_allocations_end));
	gp_jb_put(b, o, "max_live_allocations", gp_jb_int(b, (int64_t)s->max_live_allocations));
	kinds = gp_jb_obj(b);
	for (size_t i = 0; i < s->nkinds; i++) {
		x = gp_jb_obj(b);
		gp_jb_put(b, x, "end", gp_jb_int(b, (int64_t)s->kinds[i].end));
		gp_jb_put(b, x, "peak", gp_jb_int(b, (int64_t)s->kinds[i].peak));
		gp_jb_put(b, x, "allocations", gp_jb_int(b, (int64_t)s->kinds[i].allocations));
		gp_jb_put(b, kinds, s->kinds[i].kind, x);
	}
	gp_jb_put(b, o, "kinds", kinds);
	/* the former name of the cache, kept within version 1 */
	gp_jb_put(b, o, "fragmentation", cache_json(b, s, 0));
	gp_jb_put(b, o, "cache", cache_json(b, s, 1));
	return o;
}

static struct json_object *collective_json(struct gp_jb *b, const struct gp_an_collective *c)
{
	struct json_object *o = gp_jb_obj(b);

	gp_jb_put(b, o, "op", gp_jb_str(b, c->op));
	gp_jb_put(b, o, "kernel", gp_jb_str(b, c->kernel));
	gp_jb_put(b, o, "call", gp_jb_str(b, c->call));
	gp_jb_put(b, o, "launch_t", jsec(b, c->launch_t));
	gp_jb_put(b, o, "start_t", jsec(b, c->start_t));
	gp_jb_put(b, o, "end_t", jsec(b, c->end_t));
	gp_jb_put(b, o, "stream", gp_jb_int(b, c->stream));
	gp_jb_put(b, o, "tid", jint_or_null(b, c->tid));
	return o;
}

static struct json_object *collectives_json(struct gp_jb *b, const struct gp_an_collectives *c)
{
	struct json_object *o, *during;

	if (!c->present)
		return NULL;
	o = gp_jb_obj(b);
	during = gp_jb_arr(b);
	for (size_t i = 0; i < c->nduring; i++)
		gp_jb_push(b, during, collective_json(b, &c->during[i]));
	gp_jb_put(b, o, "seen", gp_jb_int(b, (int64_t)c->seen));
	gp_jb_put(b, o, "during", during);
	gp_jb_put(b, o, "during_left_out", gp_jb_int(b, (int64_t)c->more));
	gp_jb_put(b, o, "before", c->has_before ? collective_json(b, &c->before) : NULL);
	gp_jb_put(b, o, "after", c->has_after ? collective_json(b, &c->after) : NULL);
	return o;
}

static struct json_object *peak_json(struct gp_jb *b, const struct gp_an_device *d)
{
	const struct gp_an_peak *p = &d->peak;
	struct json_object *o;

	if (!d->has_peak)
		return NULL;
	o = gp_jb_obj(b);
	gp_jb_put(b, o, "what", gp_jb_str(b, p->what));
	gp_jb_put(b, o, "bytes", gp_jb_int(b, (int64_t)p->bytes));
	gp_jb_put(b, o, "t", jsec(b, p->t));
	put_step(b, o, "step", "step_when", p->step, p->step_when);
	gp_jb_put(b, o, "phase", gp_jb_str(b, p->phase));
	gp_jb_put(b, o, "layer", gp_jb_str(b, p->layer));
	gp_jb_put(b, o, "other", gp_jb_int(b, (int64_t)p->other));
	gp_jb_put(b, o, "device_total", gp_jb_int(b, (int64_t)p->device_total));
	gp_jb_put(b, o, "device_static", gp_jb_int(b, (int64_t)p->device_static));
	gp_jb_put(b, o, "reserved", jopt(b, p->reserved));
	gp_jb_put(b, o, "collectives", collectives_json(b, &p->collectives));
	set_json(b, o, &p->set);
	return o;
}

static struct json_object *steps_json(struct gp_jb *b, const struct gp_an_device *d)
{
	struct json_object *o = gp_jb_obj(b), *arr = gp_jb_arr(b);

	gp_jb_put(b, o, "count", gp_jb_int(b, (int64_t)d->steps.count));
	gp_jb_put(b, o, "stride", gp_jb_int(b, d->steps.stride));
	gp_jb_put(b, o, "begin_t", jsec(b, d->steps.begin_t));
	gp_jb_put(b, o, "unfinished", gp_jb_bool(b, d->steps.unfinished));
	for (size_t i = 0; i < d->steps.nseries; i++) {
		const struct gp_an_step_point *s = &d->steps.series[i];
		struct json_object *e = gp_jb_obj(b);

		gp_jb_put(b, e, "step", gp_jb_int(b, s->step));
		gp_jb_put(b, e, "t", jsec(b, s->t));
		gp_jb_put(b, e, "live", gp_jb_int(b, (int64_t)s->live));
		gp_jb_put(b, e, "peak", gp_jb_int(b, (int64_t)s->peak));
		gp_jb_put(b, e, "reserved", jopt(b, s->reserved));
		gp_jb_put(b, e, "total", gp_jb_int(b, (int64_t)s->total));
		gp_jb_push(b, arr, e);
	}
	gp_jb_put(b, o, "series", arr);
	return o;
}

/* n values from a, those before first null */
static struct json_object *values_json(struct gp_jb *b, const uint64_t *a, size_t n, size_t first)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < n; i++)
		gp_jb_push(b, arr, i < first ? NULL : gp_jb_int(b, (int64_t)a[i]));
	return arr;
}

static struct json_object *timeline_json(struct gp_jb *b, const struct gp_an_timeline *tl)
{
	struct json_object *o = gp_jb_obj(b), *ph = gp_jb_arr(b), *names = gp_jb_arr(b);

	gp_jb_put(b, o, "t0", jsec(b, tl->t0));
	gp_jb_put(b, o, "dt", gp_jb_num(b, tl->dt, 9));
	gp_jb_put(b, o, "n", gp_jb_int(b, (int64_t)tl->n));
	for (int s = 0; s < GP_AN_TL_N; s++) {
		struct json_object *e = NULL;

		if (tl->min[s]) {
			e = gp_jb_obj(b);
			gp_jb_put(b, e, "min", values_json(b, tl->min[s], tl->n, tl->first[s]));
			gp_jb_put(b, e, "max", values_json(b, tl->max[s], tl->n, tl->first[s]));
		}
		gp_jb_put(b, o, gp_an_tl_names[s], e);
	}
	for (size_t i = 0; i < tl->n; i++)
		gp_jb_push(b, ph, gp_jb_int(b, tl->phase[i]));
	gp_jb_put(b, o, "phase", ph);
	for (size_t i = 0; i < tl->nphases; i++)
		gp_jb_push(b, names, gp_jb_str(b, tl->phases[i]));
	gp_jb_put(b, o, "phases", names);
	return o;
}

static struct json_object *growth_json(struct gp_jb *b, const struct gp_an_growth *g)
{
	struct json_object *o;

	if (!g->present)
		return NULL;
	o = gp_jb_obj(b);
	gp_jb_put(b, o, "since_step", gp_jb_int(b, g->since_step));
	gp_jb_put(b, o, "last_step", gp_jb_int(b, g->last_step));
	gp_jb_put(b, o, "first_peak", gp_jb_int(b, (int64_t)g->first_peak));
	gp_jb_put(b, o, "last_peak", gp_jb_int(b, (int64_t)g->last_peak));
	gp_jb_put(b, o, "last_increase", gp_jb_int(b, (int64_t)g->last_increase));
	gp_jb_put(b, o, "factor_per_step", gp_jb_num(b, g->factor_per_step, 4));
	gp_jb_put(b, o, "bytes_per_step", gp_jb_num(b, g->bytes_per_step, 1));
	gp_jb_put(b, o, "live_first", gp_jb_int(b, (int64_t)g->live_first));
	gp_jb_put(b, o, "live_last", gp_jb_int(b, (int64_t)g->live_last));
	gp_jb_put(b, o, "next_peak", jopt(b, g->next_peak));
	return o;
}

static struct json_object *leak_json(struct gp_jb *b, const struct gp_an_leak *lk)
{
	struct json_object *o = gp_jb_obj(b);

	gp_jb_put(b, o, "verdict", gp_jb_str(b, gp_an_leak_verdicts[lk->verdict]));
	gp_jb_put(b, o, "warmup_steps", gp_jb_int(b, lk->warmup_steps));
	if (lk->verdict == GP_AN_LEAK_NO_STEPS) {
		gp_jb_put(b, o, "why", gp_jb_str(b, lk->why));
		return o;
	}
	gp_jb_put(b, o, "points", gp_jb_int(b, (int64_t)lk->points));
	if (lk->verdict == GP_AN_LEAK_TOO_FEW)
		return o;
	gp_jb_put(b, o, "since_step", gp_jb_int(b, lk->since_step));
	gp_jb_put(b, o, "last_step", gp_jb_int(b, lk->last_step));
	gp_jb_put(b, o, "rate_per_step", gp_jb_num(b, lk->rate_per_step, 1));
	gp_jb_put(b, o, "rate_per_second", gp_jb_num(b, lk->rate_per_second, 1));
	gp_jb_put(b, o, "r2", gp_jb_num(b, lk->r2, 4));
	gp_jb_put(b, o, "grew", gp_jb_int(b, lk->grew));
	gp_jb_put(b, o, "shrank", gp_jb_int(b, lk->shrank));
	gp_jb_put(b, o, "flat", gp_jb_int(b, lk->flat));
	gp_jb_put(b, o, "live_first", gp_jb_int(b, (int64_t)lk->live_first));
	gp_jb_put(b, o, "live_last", gp_jb_int(b, (int64_t)lk->live_last));
	gp_jb_put(b, o, "steps_until_full", gp_jb_num(b, lk->steps_until_full, 0));
	if (lk->verdict == GP_AN_LEAK_NONE)
		gp_jb_put(b, o, "why", gp_jb_str(b, lk->why));
	if (lk->has_survivors) {
		const struct gp_an_survivors *s = &lk->survivors;
		struct json_object *sv = gp_jb_obj(b);

		gp_jb_put(b, sv, "from_step", gp_jb_int(b, s->from_step));
		gp_jb_put(b, sv, "to_step", gp_jb_int(b, s->to_step));
		gp_jb_put(b, sv, "bytes", gp_jb_int(b, (int64_t)s->bytes));
		gp_jb_put(b, sv, "per_step", gp_jb_num(b, s->per_step, 1));
		gp_jb_put(b, sv, "allocations", gp_jb_int(b, (int64_t)s->allocations));
		gp_jb_put(b, sv, "by_layer", tree_json(b, s->layers, s->nlayers));
		gp_jb_put(b, sv, "by_phase", groups_json(b, &s->by_phase, "phase"));
		gp_jb_put(b, sv, "by_op", groups_json(b, &s->by_op, "op"));
		gp_jb_put(b, sv, "by_line", lines_json(b, &s->by_line));
		gp_jb_put(b, o, "survivors", sv);
	}
	return o;
}

static struct json_object *oom_json(struct gp_jb *b, const struct gp_an_oom *o)
{
	struct json_object *j = gp_jb_obj(b), *adv = gp_jb_arr(b);

	gp_jb_put(b, j, "t", jsec(b, o->t));
	put_step(b, j, "step", "step_when", o->step, o->step_when);
	gp_jb_put(b, j, "phase", gp_jb_str(b, o->phase));
	gp_jb_put(b, j, "layer", gp_jb_str(b, o->layer));
	gp_jb_put(b, j, "op", gp_jb_str(b, o->op));
	gp_jb_put(b, j, "api", gp_jb_str(b, o->api));
	gp_jb_put(b, j, "tid", gp_jb_int(b, o->tid));
	gp_jb_put(b, j, "request", gp_jb_int(b, (int64_t)o->request));
	gp_jb_put(b, j, "free", jopt(b, o->free));
	gp_jb_put(b, j, "total", jopt(b, o->total));
	gp_jb_put(b, j, "result", gp_jb_int(b, o->result));
	gp_jb_put(b, j, "allocated", gp_jb_int(b, (int64_t)o->allocated));
	gp_jb_put(b, j, "other", gp_jb_int(b, (int64_t)o->other));
	gp_jb_put(b, j, "device_total", gp_jb_int(b, (int64_t)o->device_total));
	gp_jb_put(b, j, "device_static", gp_jb_int(b, (int64_t)o->device_static));
	gp_jb_put(b, j, "reserved", jopt(b, o->reserved));
	gp_jb_put(b, j, "outside_trace", jopt(b, o->outside_trace));
	gp_jb_put(b, j, "retries", gp_jb_int(b, o->retries));
	gp_jb_put(b, j, "released_after", gp_jb_int(b, (int64_t)o->released_after));
	gp_jb_put(b, j, "recovered", gp_jb_bool(b, o->recovered));
	gp_jb_put(b, j, "fatal", gp_jb_bool(b, o->fatal));
	gp_jb_put(b, j, "outcome", gp_jb_str(b, gp_an_oom_outcomes[o->outcome]));
	gp_jb_put(b, j, "past_after", isnan(o->past_after) ? NULL : jsec(b, o->past_after));
	gp_jb_put(b, j, "raised", gp_jb_bool(b, o->raised));
	if (o->raised) {
		struct json_object *x = gp_jb_obj(b);

		gp_jb_put(b, x, "request", gp_jb_int(b, (int64_t)o->request));
		gp_jb_put(b, x, "block", gp_jb_int(b, (int64_t)o->pytorch.block));
		gp_jb_put(b, x, "allocated", gp_jb_int(b, (int64_t)o->pytorch.allocated));
		gp_jb_put(b, x, "reserved", gp_jb_int(b, (int64_t)o->pytorch.reserved));
		gp_jb_put(b, x, "free", gp_jb_int(b, (int64_t)o->pytorch.free));
		gp_jb_put(b, j, "pytorch", x);
	} else {
		gp_jb_put(b, j, "pytorch", NULL);
	}
	gp_jb_put(b, j, "collectives", collectives_json(b, &o->collectives));
	gp_jb_put(b, j, "detailed", gp_jb_bool(b, o->detailed));
	if (o->detailed)
		set_json(b, j, &o->set);
	for (size_t i = 0; i < o->nadvice; i++) {
		struct json_object *e = gp_jb_obj(b);

		gp_jb_put(b, e, "kind", gp_jb_str(b, gp_an_advice_kinds[o->advice[i].kind]));
		gp_jb_put(b, e, "text", gp_jb_str(b, o->advice[i].text));
		gp_jb_push(b, adv, e);
	}
	gp_jb_put(b, j, "advice", adv);
	return j;
}

static struct json_object *device_json(struct gp_jb *b, const struct gp_an_device *d)
{
	struct json_object *o = gp_jb_obj(b), *ooms = gp_jb_arr(b);

	gp_jb_put(b, o, "pid", gp_jb_int(b, d->pid));
	gp_jb_put(b, o, "trace", gp_jb_int(b, (int64_t)d->trace));
	gp_jb_put(b, o, "device", gp_jb_int(b, d->device));
	gp_jb_put(b, o, "name", gp_jb_str(b, d->name));
	gp_jb_put(b, o, "uuid", gp_jb_str(b, d->uuid));
	gp_jb_put(b, o, "capacity", jopt(b, d->capacity));
	gp_jb_put(b, o, "mode", gp_jb_str(b, gp_an_mode_names[d->mode]));
	gp_jb_put(b, o, "summary", summary_json(b, &d->summary));
	gp_jb_put(b, o, "peak", peak_json(b, d));
	gp_jb_put(b, o, "steps", steps_json(b, d));
	gp_jb_put(b, o, "leak", leak_json(b, &d->leak));
	gp_jb_put(b, o, "growth", growth_json(b, &d->growth));
	{
		struct json_object *adv = gp_jb_arr(b);

		for (size_t i = 0; i < d->nadvice; i++) {
			struct json_object *e = gp_jb_obj(b);

			gp_jb_put(b, e, "kind", gp_jb_str(b, gp_an_advice_kinds[d->advice[i].kind]));
			gp_jb_put(b, e, "bytes", gp_jb_int(b, (int64_t)d->advice[i].bytes));
			gp_jb_put(b, e, "of", gp_jb_int(b, (int64_t)d->advice[i].of));
			gp_jb_put(b, e, "text", gp_jb_str(b, d->advice[i].text));
			gp_jb_push(b, adv, e);
		}
		gp_jb_put(b, o, "advice", adv);
	}
	/* only where asked for (gpuprof report): other documents unchanged */
	if (d->timeline.present)
		gp_jb_put(b, o, "timeline", timeline_json(b, &d->timeline));
	for (size_t i = 0; i < d->nooms; i++)
		gp_jb_push(b, ooms, oom_json(b, &d->ooms[i]));
	gp_jb_put(b, o, "ooms", ooms);
	gp_jb_put(b, o, "oom_count", gp_jb_int(b, (int64_t)d->oom_count));
	{
		struct json_object *lo = gp_jb_obj(b);

		gp_jb_put(b, lo, "count", gp_jb_int(b, (int64_t)d->ooms_left_out.count));
		gp_jb_put(b, lo, "recovered", gp_jb_int(b, (int64_t)d->ooms_left_out.recovered));
		gp_jb_put(b, lo, "raised", gp_jb_int(b, (int64_t)d->ooms_left_out.raised));
		gp_jb_put(b, lo, "released", gp_jb_int(b, (int64_t)d->ooms_left_out.released));
		gp_jb_put(b, lo, "retries", gp_jb_int(b, (int64_t)d->ooms_left_out.retries));
		gp_jb_put(b, o, "ooms_left_out", lo);
	}
	{
		struct json_object *oc = gp_jb_obj(b), *gp = gp_jb_obj(b);

		for (int k = 0; k < GP_AN_OOM_N; k++)
			gp_jb_put(b, oc, gp_an_oom_outcomes[k], gp_jb_int(b, (int64_t)d->oom_outcomes[k]));
		gp_jb_put(b, o, "oom_outcomes", oc);
		gp_jb_put(b, gp, "count", gp_jb_int(b, (int64_t)d->ooms_got_past.count));
		gp_jb_put(b, gp, "bytes", gp_jb_int(b, (int64_t)d->ooms_got_past.bytes));
		gp_jb_put(b, gp, "seconds", jsec(b, d->ooms_got_past.seconds));
		gp_jb_put(b, o, "ooms_got_past", gp);
	}
	return o;
}

static struct json_object *gpu_json(struct gp_jb *b, const struct gp_an_gpu *g)
{
	struct json_object *o = gp_jb_obj(b), *by = gp_jb_arr(b);

	gp_jb_put(b, o, "uuid", gp_jb_str(b, g->uuid));
	gp_jb_put(b, o, "name", gp_jb_str(b, g->name));
	gp_jb_put(b, o, "capacity", jopt(b, g->capacity));
	gp_jb_put(b, o, "peak", gp_jb_int(b, (int64_t)g->peak));
	gp_jb_put(b, o, "peak_t", jsec(b, g->peak_t));
	for (size_t i = 0; i < g->nby_process; i++) {
		struct json_object *e = gp_jb_obj(b);

		gp_jb_put(b, e, "pid", gp_jb_int(b, g->by_process[i].pid));
		gp_jb_put(b, e, "device", gp_jb_int(b, g->by_process[i].device));
		gp_jb_put(b, e, "bytes", gp_jb_int(b, (int64_t)g->by_process[i].bytes));
		gp_jb_push(b, by, e);
	}
	gp_jb_put(b, o, "by_process", by);
	return o;
}

static struct json_object *diffs_json(struct gp_jb *b, const struct gp_an_rank_diff *v, size_t n)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < n; i++) {
		struct json_object *e = gp_jb_obj(b);

		gp_jb_put(b, e, "name", gp_jb_str(b, v[i].name));
		gp_jb_put(b, e, "first", gp_jb_int(b, (int64_t)v[i].first));
		gp_jb_put(b, e, "typical", gp_jb_int(b, (int64_t)v[i].typical));
		gp_jb_put(b, e, "delta", gp_jb_int(b, v[i].delta));
		gp_jb_push(b, arr, e);
	}
	return arr;
}

/* null unless two ranks or more were analyzed */
static struct json_object *ranks_json(struct gp_jb *b, const struct gp_an_result *r)
{
	const struct gp_an_ranks *k = &r->ranks;
	struct json_object *o, *rows, *missing, *why;

	if (!k->present)
		return NULL;
	o = gp_jb_obj(b);
	rows = gp_jb_arr(b);
	missing = gp_jb_arr(b);
	why = gp_jb_obj(b);
	gp_jb_put(b, o, "world_size", jint_or_null(b, k->world_size));
	gp_jb_put(b, o, "peak_what", k->what ? gp_jb_str(b, k->what) : NULL);
	for (size_t i = 0; i < k->n; i++) {
		const struct gp_an_rank *x = &k->v[i];
		const struct gp_an_device *d = &r->devices[x->device];
		struct json_object *e = gp_jb_obj(b);

		gp_jb_put(b, e, "rank", gp_jb_int(b, x->rank));
		gp_jb_put(b, e, "local_rank", jint_or_null(b, x->local_rank));
		gp_jb_put(b, e, "hostname", x->hostname ? gp_jb_str(b, x->hostname) : NULL);
		gp_jb_put(b, e, "pid", gp_jb_int(b, d->pid));
		gp_jb_put(b, e, "device", gp_jb_int(b, d->device));
		gp_jb_put(b, e, "peak", gp_jb_int(b, (int64_t)x->peak));
		gp_jb_put(b, e, "allocated_peak", jopt(b, x->allocated));
		gp_jb_put(b, e, "reserved_peak", jopt(b, x->reserved));
		gp_jb_put(b, e, "device_peak", gp_jb_int(b, (int64_t)x->device_peak));
		gp_jb_put(b, e, "other_peak", gp_jb_int(b, (int64_t)x->other_peak));
		gp_jb_put(b, e, "capacity", jopt(b, x->capacity));
		gp_jb_put(b, e, "headroom", jopt(b, x->headroom));
		gp_jb_put(b, e, "oom_count", gp_jb_int(b, (int64_t)x->oom_count));
		gp_jb_put(b, e, "first_oom_t", isnan(x->first_oom_t) ? NULL : jsec(b, x->first_oom_t));
		put_step(b, e, "first_oom_step", "first_oom_step_when", x->first_oom_step,
			 x->first_oom_step_when);
		gp_jb_put(b, e, "end_signal", x->end_signal ? gp_jb_int(b, x->end_signal) : NULL);
		gp_jb_put(b, e, "end_t", isnan(x->end_t) ? NULL : jsec(b, x->end_t));
		gp_jb_put(b, e, "stopped_after_first", gp_jb_bool(b, x->stopped_after_first));
		gp_jb_push(b, rows, e);
	}
	gp_jb_put(b, o, "by_rank", rows);
	for (size_t i = 0; i < k->nmissing; i++)
		gp_jb_push(b, missing, gp_jb_int(b, k->missing[i]));
	gp_jb_put(b, o, "missing", missing);
	gp_jb_put(b, o, "missing_count", gp_jb_int(b, (int64_t)k->missing_count));
	gp_jb_put(b, o, "min_rank", gp_jb_int(b, k->v[k->min].rank));
	gp_jb_put(b, o, "max_rank", gp_jb_int(b, k->v[k->max].rank));
	gp_jb_put(b, o, "median_rank", gp_jb_int(b, k->v[k->median].rank));
	gp_jb_put(b, o, "spread", gp_jb_int(b, (int64_t)k->spread));
	gp_jb_put(b, o, "spread_share", gp_jb_num(b, k->spread_share, 4));
	gp_jb_put(b, o, "first_out_rank", gp_jb_int(b, k->v[k->first].rank));
	gp_jb_put(b, o, "first_out_by", gp_jb_str(b, gp_an_first_out_names[k->first_by]));
	if (k->first == k->typical) {
		gp_jb_put(b, o, "why", NULL);
		json_object_put(why);
		return o;
	}
	gp_jb_put(b, why, "compared_with_rank", gp_jb_int(b, k->v[k->typical].rank));
	gp_jb_put(b, why, "peak_delta",
		  gp_jb_int(b, (int64_t)k->v[k->first].peak - (int64_t)k->v[k->typical].peak));
	gp_jb_put(b, why, "other_delta", gp_jb_int(b, k->other_delta));
	gp_jb_put(b, why, "by_category", diffs_json(b, k->categories, k->ncategories));
	gp_jb_put(b, why, "by_layer", diffs_json(b, k->layers, k->nlayers));
	gp_jb_put(b, why, "by_line", diffs_json(b, k->lines, k->nlines));
	gp_jb_put(b, o, "why", why);
	return o;
}

static struct json_object *doc_json(struct gp_jb *b, const struct gp_an_result *r)
{
	struct json_object *doc = gp_jb_obj(b), *traces = gp_jb_arr(b), *devs = gp_jb_arr(b), *gpus = gp_jb_arr(b);
	struct json_object *opts = gp_jb_obj(b);

	gp_jb_put(b, doc, "schema", gp_jb_str(b, GP_AN_SCHEMA));
	gp_jb_put(b, doc, "gpuprof_version", gp_jb_str(b, r->version));
	gp_jb_put(b, opts, "top", gp_jb_int(b, r->top));
	gp_jb_put(b, opts, "device", r->device >= 0 ? gp_jb_int(b, r->device) : NULL);
	gp_jb_put(b, opts, "process", jint_or_null(b, r->process));
	gp_jb_put(b, doc, "options", opts);
	gp_jb_put(b, doc, "time_origin_ns", gp_jb_int(b, r->time_origin_ns));
	for (size_t i = 0; i < r->ntraces; i++)
		gp_jb_push(b, traces, trace_json(b, &r->traces[i]));
	gp_jb_put(b, doc, "traces", traces);
	for (size_t i = 0; i < r->ndevices; i++)
		gp_jb_push(b, devs, device_json(b, &r->devices[i]));
	gp_jb_put(b, doc, "devices", devs);
	for (size_t i = 0; i < r->ngpus; i++)
		gp_jb_push(b, gpus, gpu_json(b, &r->gpus[i]));
	gp_jb_put(b, doc, "gpus", gpus);
	gp_jb_put(b, doc, "ranks", ranks_json(b, r));
	return doc;
}

struct json_object *gp_an_json_doc(const struct gp_an_result *r)
{
	struct gp_jb b = { 0 };
	struct json_object *doc = doc_json(&b, r);

	if (b.oom) {
		json_object_put(doc);
		return NULL;
	}
	return doc;
}

int gp_an_render_json(const struct gp_an_result *r, FILE *out)
{
	struct json_object *doc = gp_an_json_doc(r);
	const char *txt;
	int rc = 0;

	if (!doc)
		return -ENOMEM;
	txt = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						     JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!txt)
		rc = -ENOMEM;
	else if (fputs(txt, out) < 0 || fputc('\n', out) == EOF)
		rc = -EIO;
	json_object_put(doc);
	return rc;
}
