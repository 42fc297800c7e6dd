/* `gpuprof analyze --json`: the result (result.h) as a gpuprof.analyze/1
 * document (SCHEMA.md). The members of each object, their order and how
 * each is written come from result_schema.def; the functions here make
 * the nested values and say which objects are null or left out. Numbers
 * with the schema's decimals. */
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

/* a moment's step_when (result.h, enum gp_an_step_when): null where the
 * process marked no step */
static struct json_object *jstep_when(struct gp_jb *b, int64_t step, int when)
{
	return step >= 0 && when >= 0 && when < GP_AN_STEP_WHEN_N ? gp_jb_str(b, gp_an_step_when_names[when])
								    : NULL;
}

static struct json_object *jhex(struct gp_jb *b, uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "0x%" PRIx64, v);
	return gp_jb_str(b, s);
}

/* One member of result_schema.def, put into o from x (both in scope, with
 * the builder b), written as its TYPE says. */
#define RS_MEMBER(key, field, type, unit, read, meaning) RS_PUT_##type(key, field, unit);
#define RS_PUT(key, v) gp_jb_put(b, o, key, v)
#define RS_PUT_STR(k, f, u) RS_PUT(k, gp_jb_str(b, x->f))
#define RS_PUT_HEX(k, f, u) RS_PUT(k, jhex(b, x->f))
#define RS_PUT_U64(k, f, u) RS_PUT(k, gp_jb_int(b, (int64_t)x->f))
#define RS_PUT_I64(k, f, u) RS_PUT(k, gp_jb_int(b, x->f))
#define RS_PUT_I64N(k, f, u) RS_PUT(k, jint_or_null(b, x->f))
#define RS_PUT_I64Z(k, f, u) RS_PUT(k, x->f ? gp_jb_int(b, x->f) : NULL)
#define RS_PUT_U64K(k, f, u) RS_PUT(k, x->known ? gp_jb_int(b, (int64_t)x->f) : NULL)
#define RS_PUT_OPT(k, f, u) RS_PUT(k, jopt(b, x->f))
#define RS_PUT_BOOL(k, f, u) RS_PUT(k, gp_jb_bool(b, x->f))
#define RS_PUT_BOOLN(k, f, u) RS_PUT(k, x->f >= 0 ? gp_jb_bool(b, x->f) : NULL)
#define RS_PUT_NUM0(k, f, u) RS_PUT(k, gp_jb_num(b, x->f, 0))
#define RS_PUT_NUM1(k, f, u) RS_PUT(k, gp_jb_num(b, x->f, 1))
#define RS_PUT_NUM4(k, f, u) RS_PUT(k, gp_jb_num(b, x->f, 4))
#define RS_PUT_NUM6(k, f, u) RS_PUT(k, jsec(b, x->f))
#define RS_PUT_NUM9(k, f, u) RS_PUT(k, gp_jb_num(b, x->f, 9))
#define RS_PUT_ENUM(k, f, u) RS_PUT(k, gp_jb_str(b, u[x->f]))
#define RS_PUT_STEP_WHEN(k, f, u) RS_PUT(k, RS_##f)
#define RS_WHEN(step, when) jstep_when(b, x->step, x->when)
#define RS_PUT_OBJ(k, f, u) RS_PUT(k, f(b, x))
#define RS_PUT_ARR(k, f, u) RS_PUT(k, f(b, x))
#define RS_PUT_OBJ_OPT(k, f, u) f(b, o, k, x)
#define RS_PUT_ARR_OPT(k, f, u) f(b, o, k, x)

/* The C struct held to result_schema.def: each member's FIELD must have a
 * type its TYPE can be written from, or the build fails (a double where
 * the list says an integer, an integer where it says a string...). */
#define RS_INT(e)                                                                                  \
	_Generic((e), int: 1, unsigned: 1, long: 1, unsigned long: 1, long long: 1,                 \
		 unsigned long long: 1, unsigned char: 1, signed char: 1, default: 0)
#define RS_IS_STR(e) _Generic((e), const char *: 1, char *: 1, default: 0)
#define RS_IS_HEX(e) _Generic((e), uint64_t: 1, default: 0)
#define RS_IS_U64(e) RS_INT(e)
#define RS_IS_I64(e) RS_INT(e)
#define RS_IS_I64N(e) RS_INT(e)
#define RS_IS_I64Z(e) RS_INT(e)
#define RS_IS_U64K(e) RS_INT(e)
#define RS_IS_ENUM(e) RS_INT(e)
#define RS_IS_BOOL(e) RS_INT(e)
#define RS_IS_BOOLN(e) RS_INT(e)
#define RS_IS_OPT(e) _Generic((e), struct gp_an_opt: 1, default: 0)
#define RS_IS_NUM0(e) _Generic((e), double: 1, default: 0)
#define RS_IS_NUM1(e) RS_IS_NUM0(e)
#define RS_IS_NUM4(e) RS_IS_NUM0(e)
#define RS_IS_NUM6(e) RS_IS_NUM0(e)
#define RS_IS_NUM9(e) RS_IS_NUM0(e)
/* made by a function of this file (OBJ, ARR...) or of two fields
 * (STEP_WHEN): the functions' own types hold them */
#define RS_CHECK(key, field, type, unit, read, meaning) RS_CHECK_##type(key, field, type)
#define RS_CHECK_OBJ(k, f, t)
#define RS_CHECK_ARR(k, f, t)
#define RS_CHECK_OBJ_OPT(k, f, t)
#define RS_CHECK_ARR_OPT(k, f, t)
#define RS_CHECK_STEP_WHEN(k, f, t)
#define RS_CHECK_ANY(k, f, t) _Static_assert(RS_IS_##t(x->f), "result_schema.def: " k " is no " #t);
#define RS_CHECK_STR RS_CHECK_ANY
#define RS_CHECK_HEX RS_CHECK_ANY
#define RS_CHECK_U64 RS_CHECK_ANY
#define RS_CHECK_I64 RS_CHECK_ANY
#define RS_CHECK_I64N RS_CHECK_ANY
#define RS_CHECK_I64Z RS_CHECK_ANY
#define RS_CHECK_U64K RS_CHECK_ANY
#define RS_CHECK_ENUM RS_CHECK_ANY
#define RS_CHECK_BOOL RS_CHECK_ANY
#define RS_CHECK_BOOLN RS_CHECK_ANY
#define RS_CHECK_OPT RS_CHECK_ANY
#define RS_CHECK_NUM0 RS_CHECK_ANY
#define RS_CHECK_NUM1 RS_CHECK_ANY
#define RS_CHECK_NUM4 RS_CHECK_ANY
#define RS_CHECK_NUM6 RS_CHECK_ANY
#define RS_CHECK_NUM9 RS_CHECK_ANY

/* name(b, o, x): the members of LIST into o. */
#define RS_MEMBERS(name, ctype, LIST)                                                    \
	static void name(struct gp_jb *b, struct json_object *o, const ctype *x)         \
	{                                                                                \
		LIST(RS_CHECK)                                                           \
		LIST(RS_MEMBER)                                                          \
	}
/* name(b, x): an object of the members of LIST. */
#define RS_OBJECT(name, ctype, LIST)                                                     \
	RS_MEMBERS(name##_members, ctype, LIST)                                          \
	static struct json_object *name(struct gp_jb *b, const ctype *x)                 \
	{                                                                                \
		struct json_object *o = gp_jb_obj(b);                                    \
                                                                                         \
		name##_members(b, o, x);                                                 \
		return o;                                                                \
	}

#include "result_schema.def"

/* ---- a set: groups, the layer tree, source lines, the top ---- */

/* [{key: name, bytes, share, count}]; null when not present. key: the
 * grouping's (a Group's first member in result_schema.def). */
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

RS_OBJECT(alike_json, struct gp_an_node, GP_RS_ALIKE)

/* on the first of a run of alike siblings only */
static void alike_put(struct gp_jb *b, struct json_object *o, const char *key, const struct gp_an_node *nd)
{
	if (nd->alike.n)
		RS_PUT(key, alike_json(b, nd));
}

static struct json_object *node_json(struct gp_jb *b, const struct gp_an_node *x);

/* absent when none */
static void children_put(struct gp_jb *b, struct json_object *o, const char *key, const struct gp_an_node *nd)
{
	struct json_object *kids;

	if (!nd->nchildren)
		return;
	kids = gp_jb_arr(b);
	for (size_t i = 0; i < nd->nchildren; i++)
		gp_jb_push(b, kids, node_json(b, &nd->children[i]));
	RS_PUT(key, kids);
}

RS_OBJECT(node_json, struct gp_an_node, GP_RS_NODE)

static struct json_object *tree_json(struct gp_jb *b, const struct gp_an_node *v, size_t n)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < n; i++)
		gp_jb_push(b, arr, node_json(b, &v[i]));
	return arr;
}

/* `other` only: by what it is */
static void category_by_put(struct gp_jb *b, struct json_object *o, const char *key,
			    const struct gp_an_category *c)
{
	if (c->by.present)
		RS_PUT(key, groups_json(b, &c->by, "name"));
}

RS_OBJECT(category_json, struct gp_an_category, GP_RS_CATEGORY)

static struct json_object *categories_json(struct gp_jb *b, const struct gp_an_set *s)
{
	struct json_object *arr;

	if (!s->has_categories)
		return NULL;
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < s->ncategories; i++)
		gp_jb_push(b, arr, category_json(b, &s->categories[i]));
	return arr;
}

RS_OBJECT(alloc_json, struct gp_an_alloc, GP_RS_ALLOC)

/* A Python stack's frames, innermost first. */
static struct json_object *frames_json(struct gp_jb *b, const struct gp_an_frames *f)
{
	struct json_object *st = gp_jb_arr(b);

	for (size_t k = 0; k < f->n; k++)
		gp_jb_push(b, st, gp_jb_str(b, f->frames[k]));
	return st;
}

static struct json_object *stack_json(struct gp_jb *b, const struct gp_an_line *e)
{
	return frames_json(b, &e->stack);
}

RS_OBJECT(line_json, struct gp_an_line, GP_RS_LINE)

/* by_line: null where the trace has no Python stacks */
static struct json_object *lines_json(struct gp_jb *b, const struct gp_an_lines *l)
{
	struct json_object *arr;

	if (!l->present)
		return NULL;
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < l->n; i++)
		gp_jb_push(b, arr, line_json(b, &l->v[i]));
	return arr;
}

static struct json_object *layers_json(struct gp_jb *b, const struct gp_an_set *s)
{
	return tree_json(b, s->layers, s->nlayers);
}

static struct json_object *by_phase_json(struct gp_jb *b, const struct gp_an_set *s)
{
	return groups_json(b, &s->by_phase, "phase");
}

static struct json_object *by_op_json(struct gp_jb *b, const struct gp_an_set *s)
{
	return groups_json(b, &s->by_op, "op");
}

static struct json_object *by_api_json(struct gp_jb *b, const struct gp_an_set *s)
{
	return groups_json(b, &s->by_api, "api");
}

static struct json_object *by_line_json(struct gp_jb *b, const struct gp_an_set *s)
{
	return lines_json(b, &s->by_line);
}

RS_OBJECT(attributed_json, struct gp_an_set, GP_RS_ATTRIBUTED)

static struct json_object *top_json(struct gp_jb *b, const struct gp_an_set *s)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < s->ntop; i++)
		gp_jb_push(b, arr, alloc_json(b, &s->top[i]));
	return arr;
}

/* The members of a Set, into the object that holds them. */
RS_MEMBERS(set_members, struct gp_an_set, GP_RS_SET)

/* ---- per trace ---- */

RS_OBJECT(torch_obj, struct gp_an_trace, GP_RS_TORCH)

static struct json_object *torch_json(struct gp_jb *b, const struct gp_an_trace *t)
{
	return t->has_torch ? torch_obj(b, t) : NULL;
}

RS_OBJECT(dropped_json, struct gp_an_trace, GP_RS_DROPPED)
RS_OBJECT(torch_history_obj, struct gp_an_trace, GP_RS_TORCH_HISTORY)

static struct json_object *torch_history_json(struct gp_jb *b, const struct gp_an_trace *t)
{
	return t->has_torch_history ? torch_history_obj(b, t) : NULL;
}

RS_OBJECT(allocator_hook_obj, struct gp_an_trace, GP_RS_HOOK)

static struct json_object *allocator_hook_json(struct gp_jb *b, const struct gp_an_trace *t)
{
	return t->has_hook ? allocator_hook_obj(b, t) : NULL;
}

static struct json_object *notes_json(struct gp_jb *b, const struct gp_an_trace *t)
{
	struct json_object *notes = gp_jb_arr(b);

	for (size_t i = 0; i < t->nnotes; i++)
		gp_jb_push(b, notes, gp_jb_str(b, t->notes[i]));
	return notes;
}

RS_OBJECT(trace_json, struct gp_an_trace, GP_RS_TRACE)

/* ---- per process and device ---- */

RS_OBJECT(moment_json, struct gp_an_moment, GP_RS_MOMENT)
RS_OBJECT(amount_json, struct gp_an_amount, GP_RS_AMOUNT)

static struct json_object *allocated_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	return amount_json(b, &s->allocated);
}

static struct json_object *reserved_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	return amount_json(b, &s->reserved);
}

RS_OBJECT(device_total_json, struct gp_an_summary, GP_RS_DEVICE_TOTAL)
RS_OBJECT(other_obj, struct gp_an_summary, GP_RS_OTHER)

/* null in cuda mode */
static struct json_object *other_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	return s->has_other ? other_obj(b, s) : NULL;
}

RS_OBJECT(kind_use_json, struct gp_an_kind_use, GP_RS_KIND_USE)

static struct json_object *kinds_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	struct json_object *kinds = gp_jb_obj(b);

	for (size_t i = 0; i < s->nkinds; i++)
		gp_jb_put(b, kinds, s->kinds[i].kind, kind_use_json(b, &s->kinds[i]));
	return kinds;
}

RS_OBJECT(split_worst_obj, struct gp_an_split, GP_RS_SPLIT_WORST)

static struct json_object *split_worst_json(struct gp_jb *b, const struct gp_an_split *sp)
{
	return sp->has_worst ? split_worst_obj(b, sp) : NULL;
}

RS_OBJECT(split_obj, struct gp_an_split, GP_RS_SPLIT)

/* The cache's fragmentation (summary.cache.fragmentation). */
static struct json_object *split_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	return split_obj(b, &s->split);
}

static struct json_object *cache_worst_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	return s->frag.has_worst ? moment_json(b, &s->frag.worst) : NULL;
}

static struct json_object *cache_at_peak_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	return s->frag.has_at_peak ? moment_json(b, &s->frag.at_peak) : NULL;
}

RS_MEMBERS(cache_members, struct gp_an_summary, GP_RS_CACHE)
RS_MEMBERS(cache_split_members, struct gp_an_summary, GP_RS_CACHE_SPLIT)

/* Reserved less allocated: the cache, and its fragmentation
 * (summary.cache). */
static struct json_object *cache_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	struct json_object *o = gp_jb_obj(b);

	cache_members(b, o, s);
	cache_split_members(b, o, s);
	return o;
}

/* summary.fragmentation, the former name of the cache, kept within
 * version 1: the same, without its fragmentation */
static struct json_object *fragmentation_json(struct gp_jb *b, const struct gp_an_summary *s)
{
	struct json_object *o = gp_jb_obj(b);

	cache_members(b, o, s);
	return o;
}

RS_OBJECT(summary_json, struct gp_an_summary, GP_RS_SUMMARY)

RS_OBJECT(collective_json, struct gp_an_collective, GP_RS_COLLECTIVE)

static struct json_object *during_json(struct gp_jb *b, const struct gp_an_collectives *c)
{
	struct json_object *during = gp_jb_arr(b);

	for (size_t i = 0; i < c->nduring; i++)
		gp_jb_push(b, during, collective_json(b, &c->during[i]));
	return during;
}

static struct json_object *before_json(struct gp_jb *b, const struct gp_an_collectives *c)
{
	return c->has_before ? collective_json(b, &c->before) : NULL;
}

static struct json_object *after_json(struct gp_jb *b, const struct gp_an_collectives *c)
{
	return c->has_after ? collective_json(b, &c->after) : NULL;
}

RS_OBJECT(collectives_obj, struct gp_an_collectives, GP_RS_COLLECTIVES)

static struct json_object *collectives_json(struct gp_jb *b, const struct gp_an_collectives *c)
{
	return c->present ? collectives_obj(b, c) : NULL;
}

static struct json_object *peak_collectives_json(struct gp_jb *b, const struct gp_an_peak *p)
{
	return collectives_json(b, &p->collectives);
}

RS_MEMBERS(peak_members, struct gp_an_peak, GP_RS_PEAK)

static struct json_object *peak_json(struct gp_jb *b, const struct gp_an_device *d)
{
	struct json_object *o;

	if (!d->has_peak)
		return NULL;
	o = gp_jb_obj(b);
	peak_members(b, o, &d->peak);
	set_members(b, o, &d->peak.set);
	return o;
}

RS_OBJECT(step_point_json, struct gp_an_step_point, GP_RS_STEP_POINT)

static struct json_object *series_json(struct gp_jb *b, const struct gp_an_device *d)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < d->steps.nseries; i++)
		gp_jb_push(b, arr, step_point_json(b, &d->steps.series[i]));
	return arr;
}

RS_OBJECT(steps_json, struct gp_an_device, GP_RS_STEPS)

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

/* only where asked for (gpuprof report): other documents unchanged */
static void timeline_put(struct gp_jb *b, struct json_object *o, const char *key, const struct gp_an_device *d)
{
	if (d->timeline.present)
		RS_PUT(key, timeline_json(b, &d->timeline));
}

/* ---- what was live at moments, and at --at's time ---- */

static struct json_object *holders_json(struct gp_jb *b, const struct gp_an_holder *h, size_t n);

static struct json_object *breakdown_categories_json(struct gp_jb *b, const struct gp_an_breakdown *x)
{
	return categories_json(b, &x->set);
}

static struct json_object *breakdown_by_layer_json(struct gp_jb *b, const struct gp_an_breakdown *x)
{
	return holders_json(b, x->by_layer, x->nlayer);
}

static struct json_object *breakdown_by_line_json(struct gp_jb *b, const struct gp_an_breakdown *x)
{
	return x->has_lines ? holders_json(b, x->by_line, x->nline) : NULL;
}

static struct json_object *largest_json(struct gp_jb *b, const struct gp_an_breakdown *x)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < x->nlargest; i++)
		gp_jb_push(b, arr, gp_jb_int(b, (int64_t)x->largest[i]));
	return arr;
}

static struct json_object *segment_blocks_json(struct gp_jb *b, const struct gp_an_segment *x)
{
	struct json_object *arr;

	if (!x->has_blocks)
		return NULL;
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < x->nblocks; i++) {
		struct json_object *e = gp_jb_arr(b);

		for (size_t k = 0; k < 3; k++)
			gp_jb_push(b, e, gp_jb_int(b, x->blocks ? x->blocks[3 * i + k] : 0));
		gp_jb_push(b, arr, e);
	}
	return arr;
}

RS_OBJECT(segment_json, struct gp_an_segment, GP_RS_SEGMENT)

static struct json_object *segment_list_json(struct gp_jb *b, const struct gp_an_segment *v, size_t n)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < n; i++)
		gp_jb_push(b, arr, segment_json(b, &v[i]));
	return arr;
}

static struct json_object *segments_json(struct gp_jb *b, const struct gp_an_breakdown *x)
{
	return x->has_segments ? segment_list_json(b, x->segments, x->nsegments) : NULL;
}

RS_OBJECT(breakdown_json, struct gp_an_breakdown, GP_RS_BREAKDOWN)

/* only with the timeline (gpuprof report): other documents unchanged */
static void moments_put(struct gp_jb *b, struct json_object *o, const char *key, const struct gp_an_device *d)
{
	struct json_object *arr;

	if (!d->timeline.present)
		return;
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < d->nmoments; i++)
		gp_jb_push(b, arr, breakdown_json(b, &d->moments[i]));
	RS_PUT(key, arr);
}

static void at_put(struct gp_jb *b, struct json_object *o, const char *key, const struct gp_an_device *d)
{
	if (d->has_at)
		RS_PUT(key, breakdown_json(b, &d->at));
}

static void bands_put(struct gp_jb *b, struct json_object *o, const char *key, const struct gp_an_device *d)
{
	struct json_object *arr;

	if (!d->timeline.present && !d->has_at)
		return;
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < d->nbands; i++)
		gp_jb_push(b, arr, alloc_json(b, &d->bands[i]));
	RS_PUT(key, arr);
}

/* only with the bands, where the trace has Python stacks */
static void band_stacks_put(struct gp_jb *b, struct json_object *o, const char *key, const struct gp_an_device *d)
{
	struct json_object *arr;

	if ((!d->timeline.present && !d->has_at) || !d->band_stacks)
		return;
	arr = gp_jb_arr(b);
	for (size_t i = 0; i < d->nbands; i++)
		gp_jb_push(b, arr, d->band_stacks[i].n ? frames_json(b, &d->band_stacks[i]) : NULL);
	RS_PUT(key, arr);
}

RS_OBJECT(growth_obj, struct gp_an_growth, GP_RS_GROWTH)

static struct json_object *growth_json(struct gp_jb *b, const struct gp_an_device *d)
{
	return d->growth.present ? growth_obj(b, &d->growth) : NULL;
}

static struct json_object *survivors_layers_json(struct gp_jb *b, const struct gp_an_survivors *s)
{
	return tree_json(b, s->layers, s->nlayers);
}

static struct json_object *survivors_by_phase_json(struct gp_jb *b, const struct gp_an_survivors *s)
{
	return groups_json(b, &s->by_phase, "phase");
}

static struct json_object *survivors_by_op_json(struct gp_jb *b, const struct gp_an_survivors *s)
{
	return groups_json(b, &s->by_op, "op");
}

static struct json_object *survivors_by_line_json(struct gp_jb *b, const struct gp_an_survivors *s)
{
	return lines_json(b, &s->by_line);
}

RS_OBJECT(survivors_json, struct gp_an_survivors, GP_RS_SURVIVORS)

RS_OBJECT(holder_json, struct gp_an_holder, GP_RS_HOLDER)

static struct json_object *holders_json(struct gp_jb *b, const struct gp_an_holder *h, size_t n)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < n; i++)
		gp_jb_push(b, arr, holder_json(b, &h[i]));
	return arr;
}

static struct json_object *outline_by_category_json(struct gp_jb *b, const struct gp_an_device *d)
{
	return holders_json(b, d->outline.by_category, d->outline.ncategory);
}

static struct json_object *outline_by_layer_json(struct gp_jb *b, const struct gp_an_device *d)
{
	return holders_json(b, d->outline.by_layer, d->outline.nlayer);
}

RS_OBJECT(outline_obj, struct gp_an_device, GP_RS_OUTLINE)

/* only a flight recorder's trace has one: other documents unchanged */
static void outline_put(struct gp_jb *b, struct json_object *o, const char *key, const struct gp_an_device *d)
{
	if (d->outline.present)
		RS_PUT(key, outline_obj(b, d));
}

/* The members there are depend on the verdict (result.h, struct gp_an_leak). */
static struct json_object *leak_json(struct gp_jb *b, const struct gp_an_device *d)
{
	const struct gp_an_leak *lk = &d->leak;
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
	if (lk->has_survivors)
		gp_jb_put(b, o, "survivors", survivors_json(b, &lk->survivors));
	return o;
}

RS_OBJECT(pytorch_obj, struct gp_an_oom, GP_RS_PYTORCH)

/* with raised only */
static struct json_object *pytorch_json(struct gp_jb *b, const struct gp_an_oom *e)
{
	return e->raised ? pytorch_obj(b, e) : NULL;
}

static struct json_object *oom_collectives_json(struct gp_jb *b, const struct gp_an_oom *e)
{
	return collectives_json(b, &e->collectives);
}

RS_OBJECT(oom_advice_item, struct gp_an_advice, GP_RS_OOM_ADVICE)

static struct json_object *oom_advice_json(struct gp_jb *b, const struct gp_an_oom *e)
{
	struct json_object *adv = gp_jb_arr(b);

	for (size_t i = 0; i < e->nadvice; i++)
		gp_jb_push(b, adv, oom_advice_item(b, &e->advice[i]));
	return adv;
}

/* native mode with the allocator hook: other documents unchanged */
static void oom_segments_put(struct gp_jb *b, struct json_object *o, const char *key, const struct gp_an_oom *x)
{
	if (x->has_segments)
		RS_PUT(key, segment_list_json(b, x->segments, x->nsegments));
}

RS_MEMBERS(oom_members, struct gp_an_oom, GP_RS_OOM)
RS_MEMBERS(oom_end_members, struct gp_an_oom, GP_RS_OOM_END)

static struct json_object *oom_json(struct gp_jb *b, const struct gp_an_oom *e)
{
	struct json_object *o = gp_jb_obj(b);

	oom_members(b, o, e);
	if (e->detailed)
		set_members(b, o, &e->set);
	oom_end_members(b, o, e);
	return o;
}

static struct json_object *device_summary_json(struct gp_jb *b, const struct gp_an_device *d)
{
	return summary_json(b, &d->summary);
}

RS_OBJECT(run_advice_item, struct gp_an_advice, GP_RS_RUN_ADVICE)

static struct json_object *run_advice_json(struct gp_jb *b, const struct gp_an_device *d)
{
	struct json_object *adv = gp_jb_arr(b);

	for (size_t i = 0; i < d->nadvice; i++)
		gp_jb_push(b, adv, run_advice_item(b, &d->advice[i]));
	return adv;
}

static struct json_object *ooms_json(struct gp_jb *b, const struct gp_an_device *d)
{
	struct json_object *ooms = gp_jb_arr(b);

	for (size_t i = 0; i < d->nooms; i++)
		gp_jb_push(b, ooms, oom_json(b, &d->ooms[i]));
	return ooms;
}

RS_OBJECT(ooms_left_out_json, struct gp_an_device, GP_RS_OOMS_LEFT_OUT)
RS_OBJECT(oom_outcomes_json, struct gp_an_device, GP_RS_OOM_OUTCOMES)
RS_OBJECT(ooms_got_past_json, struct gp_an_device, GP_RS_OOMS_GOT_PAST)
RS_OBJECT(device_json, struct gp_an_device, GP_RS_DEVICE)

RS_OBJECT(gpu_share_json, struct gp_an_gpu_share, GP_RS_GPU_SHARE)

static struct json_object *by_process_json(struct gp_jb *b, const struct gp_an_gpu *g)
{
	struct json_object *by = gp_jb_arr(b);

	for (size_t i = 0; i < g->nby_process; i++)
		gp_jb_push(b, by, gpu_share_json(b, &g->by_process[i]));
	return by;
}

RS_OBJECT(gpu_json, struct gp_an_gpu, GP_RS_GPU)
RS_OBJECT(rank_diff_json, struct gp_an_rank_diff, GP_RS_RANK_DIFF)

static struct json_object *diffs_json(struct gp_jb *b, const struct gp_an_rank_diff *v, size_t n)
{
	struct json_object *arr = gp_jb_arr(b);

	for (size_t i = 0; i < n; i++)
		gp_jb_push(b, arr, rank_diff_json(b, &v[i]));
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
		gp_jb_put(b, e, "first_oom_step", jint_or_null(b, x->first_oom_step));
		gp_jb_put(b, e, "first_oom_step_when", jstep_when(b, x->first_oom_step, x->first_oom_step_when));
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

RS_OBJECT(options_json, struct gp_an_result, GP_RS_OPTIONS)

/* The document: its lists are hand-made here (result_schema.def, GP_RS_DOC). */
static struct json_object *doc_json(struct gp_jb *b, const struct gp_an_result *r)
{
	struct json_object *doc = gp_jb_obj(b), *traces = gp_jb_arr(b), *devs = gp_jb_arr(b), *gpus = gp_jb_arr(b);

	gp_jb_put(b, doc, "schema", gp_jb_str(b, GP_AN_SCHEMA));
	gp_jb_put(b, doc, "gpuprof_version", gp_jb_str(b, r->version));
	gp_jb_put(b, doc, "options", options_json(b, r));
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
