/* A `gpuprof analyze --json` document (viewer/analyze/SCHEMA.md) into the
 * result analyze makes in memory (viewer/analyze/result/result.h), so that compare
 * and check have one input model whether a side was a trace or a summary
 * (unit.c makes the units of either).
 *
 * Only the members compare uses are read and filled: those
 * viewer/analyze/result/result_schema.def marks REQ, NUL or OPT are read by the
 * readers made from it below, those it marks HAND by the code here; the
 * rest of the result stays zero, and a result read here is never
 * rendered. The document may come from anywhere (a baseline kept for
 * months, a file edited by hand), so every member read is checked for its
 * type and range, and the first one wrong ends the load with its path in
 * the message. Members not used are not looked at: schema version 1 may
 * grow. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cmp.h"
#include "result.h"

#define MAX_LAYER_DEPTH 64 /* analyze cuts its trees at 48 levels */
#define MAX_RANK (1 << 24)

struct vx {
	struct cmp_where at;    /* where, for messages */
	struct gp_an_result *r; /* being filled */
};

enum { REQUIRED, NULLABLE, OPTIONAL /* may be absent or null */ };

static const char *type_name(enum json_type t)
{
	switch (t) {
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	case json_type_int:
		return "an integer";
	case json_type_boolean:
		return "true or false";
	default:
		return "a number";
	}
}

/* o[key] of type t; *out is NULL for null (or absent, when OPTIONAL). */
static int member(struct vx *v, struct json_object *o, const char *path, const char *key, int need,
		  enum json_type t, struct json_object **out)
{
	struct json_object *m;
	enum json_type got;

	*out = NULL;
	if (!json_object_object_get_ex(o, key, &m)) {
		if (need == OPTIONAL)
			return 0;
		return cmp_bad(&v->at, path, "'%s' is missing", key);
	}
	if (!m) {
		if (need != REQUIRED)
			return 0;
		return cmp_bad(&v->at, path, "'%s' is null, not %s", key, type_name(t));
	}
	got = json_object_get_type(m);
	if (got != t && !(t == json_type_double && got == json_type_int))
		return cmp_bad(&v->at, path, "'%s' is not %s", key, type_name(t));
	*out = m;
	return 0;
}

static int get_str(struct vx *v, struct json_object *o, const char *path, const char *key, int need,
		   const char **out)
{
	struct json_object *m;
	int rc = member(v, o, path, key, need, json_type_string, &m);

	*out = NULL;
	if (rc || !m)
		return rc;
	/* "\u0000" would hide the rest of the string from C */
	if ((size_t)json_object_get_string_len(m) != strlen(json_object_get_string(m)))
		return cmp_bad(&v->at, path, "'%s' holds a NUL character", key);
	*out = gp_an_strndup(v->r, json_object_get_string(m), (size_t)json_object_get_string_len(m));
	return *out ? 0 : -ENOMEM;
}

/* An integer from min to max; *known is 0 for null. */
static int get_int(struct vx *v, struct json_object *o, const char *path, const char *key, int need,
		   int64_t min, int64_t max, int64_t *out, int *known)
{
	struct json_object *m;
	int rc = member(v, o, path, key, need, json_type_int, &m);
	int64_t x;

	*out = 0;
	if (known)
		*known = 0;
	if (rc || !m)
		return rc;
	x = json_object_get_int64(m);
	/* json-c saturates beyond int64, and keeps those above as uint64 */
	if (x < min || x > max || (x == INT64_MAX && json_object_get_uint64(m) != (uint64_t)INT64_MAX))
		return cmp_bad(&v->at, path, "'%s' is %s, not from %lld to %lld", key, json_object_to_json_string(m),
			   (long long)min, (long long)max);
	*out = x;
	if (known)
		*known = 1;
	return 0;
}

static int get_bytes(struct vx *v, struct json_object *o, const char *path, const char *key, int need,
		     uint64_t *out, int *known)
{
	int64_t x;
	int rc = get_int(v, o, path, key, need, 0, (int64_t)GP_CMP_MAX_BYTES, &x, known);

	*out = (uint64_t)x;
	return rc;
}

static int get_num(struct vx *v, struct json_object *o, const char *path, const char *key, int need,
		   double *out)
{
	struct json_object *m;
	int rc = member(v, o, path, key, need, json_type_double, &m);
	double x;

	*out = 0;
	if (rc || !m)
		return rc;
	x = json_object_get_double(m);
	if (!isfinite(x) || x < -1e12 || x > 1e12)
		return cmp_bad(&v->at, path, "'%s' is %s, not a time in seconds", key, json_object_to_json_string(m));
	*out = x;
	return 0;
}

/* s among the n allowed: its index into *idx */
static int one_of(struct vx *v, const char *path, const char *key, const char *s,
		  const char *const *allowed, size_t n, int *idx)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, allowed[i]) == 0) {
			if (idx)
				*idx = (int)i;
			return 0;
		}
	return cmp_bad(&v->at, path, "'%s' is \"%.40s\", not a value gpuprof.analyze/1 has", key, s);
}

/* n elements in the result's arena */
static void *arena_array(struct vx *v, size_t n, size_t size)
{
	return n && n <= SIZE_MAX / size ? gp_an_alloc(v->r, n * size) : NULL;
}

/* A boolean; *out 0 for null (or absent, when OPTIONAL). */
static int get_flag(struct vx *v, struct json_object *o, const char *path, const char *key, int need,
		    int *out)
{
	struct json_object *m;
	int rc = member(v, o, path, key, need, json_type_boolean, &m);

	*out = m ? json_object_get_boolean(m) : 0;
	return rc;
}

/* A string among the n allowed: its index into *idx (left as it was for
 * null, or absent when OPTIONAL). */
static int get_enum(struct vx *v, struct json_object *o, const char *path, const char *key, int need,
		    const char *const *allowed, size_t n, int *idx)
{
	const char *s;
	int rc = get_str(v, o, path, key, need, &s);

	if (rc || !s)
		return rc;
	return one_of(v, path, key, s, allowed, n, idx);
}

/* ---- the members result_schema.def marks REQ, NUL or OPT ----
 *
 * RS_READER(name, ctype, LIST) makes name(v, o, path, x): those members of
 * LIST read from the JSON object o into x, each checked for its type and
 * for the range its UNIT allows, in the list's order; the first one wrong
 * ends it. An integer that may be null is -1 for null. */
#define RS_MAX_BYTES ((int64_t)GP_CMP_MAX_BYTES)
#define RS_MAX_COUNT ((int64_t)GP_CMP_MAX_BYTES)
#define RS_MAX_PID ((int64_t)INT_MAX)
#define RS_MAX_DEVICE ((int64_t)63)
#define RS_MAX_STEP (INT64_C(1) << 53)
#define RS_MAX_RANK ((int64_t)MAX_RANK)
#define RS_MAX_NS INT64_MAX

#define RS_READ(key, field, type, unit, read, meaning) RS_READ_##read(key, field, type, unit)
#define RS_READ_NO(k, f, t, u)
#define RS_READ_HAND(k, f, t, u)
#define RS_READ_REQ(k, f, t, u) RS_GET_##t(REQUIRED, k, f, u)
#define RS_READ_NUL(k, f, t, u) RS_GET_##t(NULLABLE, k, f, u)
#define RS_READ_OPT(k, f, t, u) RS_GET_##t(OPTIONAL, k, f, u)
#define RS_TRY(call)                                                                     \
	if ((rc = (call)))                                                               \
		return rc;
#define RS_GET_STR(need, k, f, u) RS_TRY(get_str(v, o, path, k, need, &x->f))
#define RS_GET_BOOL(need, k, f, u) RS_TRY(get_flag(v, o, path, k, need, &x->f))
#define RS_GET_NUM6(need, k, f, u) RS_TRY(get_num(v, o, path, k, need, &x->f))
#define RS_GET_U64(need, k, f, u)                                                        \
	{                                                                                \
		int64_t n_;                                                              \
		RS_TRY(get_int(v, o, path, k, need, 0, RS_MAX_##u, &n_, NULL))           \
		x->f = (uint64_t)n_;                                                     \
	}
#define RS_GET_OPT(need, k, f, u)                                                        \
	{                                                                                \
		int64_t n_;                                                              \
		RS_TRY(get_int(v, o, path, k, need, 0, RS_MAX_##u, &n_, &x->f.known))    \
		x->f.v = (uint64_t)n_;                                                   \
	}
#define RS_GET_I64(need, k, f, u)                                                        \
	{                                                                                \
		int64_t n_;                                                              \
		int known_;                                                              \
		RS_TRY(get_int(v, o, path, k, need, 0, RS_MAX_##u, &n_, &known_))        \
		x->f = known_ ? n_ : -1;                                                 \
	}
#define RS_GET_I64N RS_GET_I64
#define RS_GET_ENUM(need, k, f, u)                                                       \
	{                                                                                \
		int i_ = 0;                                                              \
		RS_TRY(get_enum(v, o, path, k, need, u, sizeof(u) / sizeof(u[0]), &i_))  \
		x->f = i_;                                                               \
	}
/* absent or null: in (a summary written before step_when) */
#define RS_GET_STEP_WHEN(need, k, f, u)                                                  \
	{                                                                                \
		int i_ = GP_AN_STEP_IN;                                                  \
		RS_TRY(get_enum(v, o, path, k, need, gp_an_step_when_names,              \
				GP_AN_STEP_WHEN_N, &i_))                                 \
		x->RS_WHEN_##f = (uint8_t)i_;                                            \
	}
#define RS_WHEN_WHEN(step, when) when

#define RS_READER(name, ctype, LIST)                                                     \
	static int name(struct vx *v, struct json_object *o, const char *path, ctype *x) \
	{                                                                                \
		int rc = 0;                                                              \
                                                                                         \
		LIST(RS_READ)                                                            \
		return rc;                                                               \
	}

#include "viewer/analyze/result/result_schema.def"

RS_READER(read_options_members, struct gp_an_result, GP_RS_OPTIONS)
RS_READER(read_trace_members, struct gp_an_trace, GP_RS_TRACE)
RS_READER(read_device_members, struct gp_an_device, GP_RS_DEVICE)
RS_READER(read_amount_members, struct gp_an_amount, GP_RS_AMOUNT)
RS_READER(read_peak_members, struct gp_an_peak, GP_RS_PEAK)
RS_READER(read_set_members, struct gp_an_set, GP_RS_SET)
RS_READER(read_category_members, struct gp_an_category, GP_RS_CATEGORY)
RS_READER(read_group_members, struct gp_an_group, GP_RS_GROUP)
RS_READER(read_node_members, struct gp_an_node, GP_RS_NODE)
RS_READER(read_alloc_members, struct gp_an_alloc, GP_RS_ALLOC)
RS_READER(read_oom_members, struct gp_an_oom, GP_RS_OOM)
RS_READER(read_ooms_left_out_members, struct gp_an_device, GP_RS_OOMS_LEFT_OUT)

/* ---- the layer tree ---- */

/* The nodes of arr into *out: names and bytes (the rest of a Node is not
 * used). Consistency (children within their parent) is unit.c's. parent:
 * the path down to arr, as far as messages show it; sep joins levels. */
static int read_nodes(struct vx *v, const char *path, struct json_object *arr, int depth,
		      const char *parent, const char *sep, struct gp_an_node **out, size_t *nout)
{
	size_t n = json_object_array_length(arr);
	struct gp_an_node *nodes;
	char where[160];
	int rc;

	*out = NULL;
	*nout = 0;
	if (depth > MAX_LAYER_DEPTH)
		return cmp_bad(&v->at, path, "the layer tree is more than %d levels deep", MAX_LAYER_DEPTH);
	if (!n)
		return 0;
	nodes = arena_array(v, n, sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	if (snprintf(where, sizeof(where), "%s: a layer under '%.60s'", path, parent ? parent : "the root") >=
	    (int)sizeof(where))
		memcpy(where + sizeof(where) - 4, "...", 4); /* a message's place, cut */
	for (size_t i = 0; i < n; i++) {
		struct json_object *node = json_object_array_get_idx(arr, i), *kids;
		struct gp_an_node *nd = &nodes[i];

		if (!node || !json_object_is_type(node, json_type_object))
			return cmp_bad(&v->at, where, "not an object");
		if ((rc = read_node_members(v, node, where, nd)) ||
		    (rc = member(v, node, where, "children", OPTIONAL, json_type_array, &kids)))
			return rc;
		if (kids) {
			char below[64];

			/* a label for messages only: a deep path is cut, and says so */
			if (snprintf(below, sizeof(below), "%s%s%s", parent ? parent : "", parent ? sep : "",
				     nd->name) >= (int)sizeof(below))
				memcpy(below + sizeof(below) - 4, "...", 4);
			if ((rc = read_nodes(v, path, kids, depth + 1, below, sep, &nd->children,
					     &nd->nchildren)))
				return rc;
		}
	}
	*out = nodes;
	*nout = n;
	return 0;
}

/* Categories, with `by` (what `other` is) when the document says. */
static int read_categories(struct vx *v, struct json_object *peak, const char *path,
			   struct gp_an_set *set)
{
	struct json_object *arr;
	char p[96], q[128];
	size_t n;
	int rc;

	snprintf(p, sizeof(p), "%s.by_category", path);
	if ((rc = member(v, peak, path, "by_category", NULLABLE, json_type_array, &arr)) || !arr)
		return rc;
	set->has_categories = 1;
	n = json_object_array_length(arr);
	if (n && !(set->categories = arena_array(v, n, sizeof(*set->categories))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(arr, i), *by;
		struct gp_an_category *cat = &set->categories[i];
		size_t nby;

		snprintf(q, sizeof(q), "%s[%zu]", p, i);
		if (!c || !json_object_is_type(c, json_type_object))
			return cmp_bad(&v->at, q, "not an object");
		if ((rc = read_category_members(v, c, q, cat)) ||
		    (rc = member(v, c, q, "by", OPTIONAL, json_type_array, &by)))
			return rc;
		set->ncategories = i + 1;
		if (!by)
			continue;
		cat->by.present = 1;
		nby = json_object_array_length(by);
		if (nby && !(cat->by.v = arena_array(v, nby, sizeof(*cat->by.v))))
			return -ENOMEM;
		for (size_t j = 0; j < nby; j++) {
			struct json_object *o = json_object_array_get_idx(by, j);
			char r[160];

			snprintf(r, sizeof(r), "%s.by[%zu]", q, j);
			if (!o || !json_object_is_type(o, json_type_object))
				return cmp_bad(&v->at, r, "not an object");
			if ((rc = read_group_members(v, o, r, &cat->by.v[j])))
				return rc;
			cat->by.n = j + 1;
		}
	}
	return 0;
}

static int read_top(struct vx *v, struct json_object *peak, const char *path, struct gp_an_set *set)
{
	struct json_object *arr;
	char q[128];
	size_t n;
	int rc;

	if ((rc = member(v, peak, path, "top", REQUIRED, json_type_array, &arr)))
		return rc;
	n = json_object_array_length(arr);
	if (n && !(set->top = arena_array(v, n, sizeof(*set->top))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		struct gp_an_alloc *a = &set->top[i];

		snprintf(q, sizeof(q), "%s.top[%zu]", path, i);
		if (!o || !json_object_is_type(o, json_type_object))
			return cmp_bad(&v->at, q, "not an object");
		if ((rc = read_alloc_members(v, o, q, a)))
			return rc;
		set->ntop = i + 1;
	}
	return 0;
}

static const char *const peak_whats[] = { "allocated", "reserved", "device" };

static int read_peak(struct vx *v, struct json_object *d, const char *path, struct gp_an_device *dev)
{
	struct gp_an_peak *pk = &dev->peak;
	struct json_object *peak, *layers;
	char p[64], lp[96];
	int rc;

	snprintf(p, sizeof(p), "%s.peak", path);
	if ((rc = member(v, d, path, "peak", NULLABLE, json_type_object, &peak)) || !peak)
		return rc;
	dev->has_peak = 1;
	if ((rc = read_peak_members(v, peak, p, pk)) ||
	    (rc = one_of(v, p, "what", pk->what, peak_whats, 3, NULL)) ||
	    (rc = read_set_members(v, peak, p, &pk->set)))
		return rc;
	snprintf(lp, sizeof(lp), "%s.by_layer", p);
	if ((rc = read_categories(v, peak, p, &pk->set)) ||
	    (rc = member(v, peak, p, "by_layer", REQUIRED, json_type_array, &layers)) ||
	    (rc = read_nodes(v, lp, layers, 1, NULL, dev->mode == GP_AN_MODE_CUDA ? " > " : ".",
			     &pk->set.layers, &pk->set.nlayers)))
		return rc;
	return read_top(v, peak, p, &pk->set);
}

static int read_amount(struct vx *v, struct json_object *sum, const char *path, const char *key,
		       struct gp_an_amount *out)
{
	struct json_object *a;
	char p[96];
	int rc;

	snprintf(p, sizeof(p), "%s.%s", path, key);
	if ((rc = member(v, sum, path, key, REQUIRED, json_type_object, &a)) ||
	    (rc = read_amount_members(v, a, p, out)))
		return rc;
	if (out->known && !out->peak.known)
		return cmp_bad(&v->at, p, "known, but its 'peak' is null");
	return 0;
}

static int read_traces(struct vx *v, struct json_object *doc)
{
	struct json_object *arr;
	struct gp_an_trace *t;
	char p[48];
	size_t n;
	int rc;

	if ((rc = member(v, doc, "", "traces", REQUIRED, json_type_array, &arr)))
		return rc;
	n = json_object_array_length(arr);
	if (!n)
		return 0;
	t = arena_array(v, n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	v->r->traces = t;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);

		snprintf(p, sizeof(p), "traces[%zu]", i);
		if (!o || !json_object_is_type(o, json_type_object))
			return cmp_bad(&v->at, p, "not an object");
		if ((rc = read_trace_members(v, o, p, &t[i])))
			return rc;
		v->r->ntraces = i + 1;
	}
	return 0;
}

#define MAX_OOMS 64 /* analyze lists 8 */

/* A boolean that may be absent (*known 0). */
static int get_opt_bool(struct vx *v, struct json_object *o, const char *path, const char *key, int *out,
			int *known)
{
	struct json_object *m;
	int rc = member(v, o, path, key, OPTIONAL, json_type_boolean, &m);

	*out = m ? json_object_get_boolean(m) : 0;
	*known = m != NULL;
	return rc;
}

/* What check and compare say of the failed allocations: their count by
 * outcome (added within gpuprof.analyze/1; a summary written before has
 * none, and unit.c counts every failure not recovered from), those left
 * out of the list, and of the listed ones what the failure line names. */
static int read_ooms(struct vx *v, struct json_object *d, const char *path, struct gp_an_device *u)
{
	struct json_object *arr, *lo, *oc;
	size_t n;
	int rc, known;
	char p[96];

	if ((rc = member(v, d, path, "oom_outcomes", OPTIONAL, json_type_object, &oc)) ||
	    (rc = member(v, d, path, "ooms_left_out", OPTIONAL, json_type_object, &lo)) ||
	    (rc = member(v, d, path, "ooms", OPTIONAL, json_type_array, &arr)))
		return rc;
	if (oc) {
		snprintf(p, sizeof(p), "%s.oom_outcomes", path);
		for (int k = 0; k < GP_AN_OOM_N; k++)
			if ((rc = get_bytes(v, oc, p, gp_an_oom_outcomes[k], REQUIRED, &u->oom_outcomes[k], NULL)))
				return rc;
		u->has_oom_outcomes = 1;
	}
	if (lo) {
		snprintf(p, sizeof(p), "%s.ooms_left_out", path);
		if ((rc = read_ooms_left_out_members(v, lo, p, u)))
			return rc;
	}
	n = arr ? json_object_array_length(arr) : 0;
	if (n > MAX_OOMS)
		return cmp_bad(&v->at, path, "'ooms' holds %zu failures, more than %d", n, MAX_OOMS);
	if (n && !(u->ooms = arena_array(v, n, sizeof(*u->ooms))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		struct gp_an_oom *x = &u->ooms[i];

		snprintf(p, sizeof(p), "%s.ooms[%zu]", path, i);
		if (!o || !json_object_is_type(o, json_type_object))
			return cmp_bad(&v->at, p, "not an object");
		if ((rc = read_oom_members(v, o, p, x)) ||
		    (rc = get_opt_bool(v, o, p, "fatal", &x->fatal, &known)))
			return rc;
		if (u->has_oom_outcomes && !known)
			return cmp_bad(&v->at, p, "'fatal' is missing, though 'oom_outcomes' is there");
		u->nooms = i + 1;
	}
	return 0;
}

static int read_device(struct vx *v, struct json_object *d, const char *path, struct gp_an_device *u)
{
	struct json_object *sum;
	int64_t t;
	size_t ntr = v->r->ntraces;
	int rc;
	char p[64];

	if (!json_object_is_type(d, json_type_object))
		return cmp_bad(&v->at, path, "not an object");
	if ((rc = get_int(v, d, path, "trace", REQUIRED, 0, (int64_t)ntr - 1, &t, NULL)))
		return ntr ? rc : cmp_bad(&v->at, path, "a device, but 'traces' is empty");
	u->trace = (size_t)t;
	if ((rc = read_device_members(v, d, path, u)))
		return rc;
	if (v->r->traces[t].pid != u->pid)
		return cmp_bad(&v->at, path, "pid %lld, but its trace is of pid %lld", (long long)u->pid,
			   (long long)v->r->traces[t].pid);
	if ((rc = read_ooms(v, d, path, u)) ||
	    (rc = member(v, d, path, "summary", REQUIRED, json_type_object, &sum)))
		return rc;
	snprintf(p, sizeof(p), "%s.summary", path);
	if ((rc = read_amount(v, sum, p, "allocated", &u->summary.allocated)) ||
	    (rc = read_amount(v, sum, p, "reserved", &u->summary.reserved)))
		return rc;
	return read_peak(v, d, path, u);
}

static int read_options(struct vx *v, struct json_object *doc, struct cmp_side *side)
{
	struct json_object *o;
	int rc;

	if ((rc = member(v, doc, "", "options", REQUIRED, json_type_object, &o)) ||
	    (rc = read_options_members(v, o, "options", v->r)))
		return rc;
	/* a device missing from a filtered summary is no surprise: say why */
	if (v->r->device >= 0 && cmp_note(&side->notes, "%s: %s holds GPU %lld only (analyze --device)",
					  side->label, v->at.input, (long long)v->r->device))
		return -ENOMEM;
	if (v->r->process >= 0 && cmp_note(&side->notes, "%s: %s holds process %lld only (analyze --process)",
					   side->label, v->at.input, (long long)v->r->process))
		return -ENOMEM;
	return 0;
}

static int read_schema(struct vx *v, struct json_object *doc)
{
	struct json_object *m;
	const char *s;

	if (!json_object_is_type(doc, json_type_object))
		return cmp_bad(&v->at, "", "not a JSON object, so not a `gpuprof analyze --json` summary");
	if (!json_object_object_get_ex(doc, "schema", &m))
		return cmp_bad(&v->at, "", "no 'schema': not a `gpuprof analyze --json` summary");
	if (!json_object_is_type(m, json_type_string))
		return cmp_bad(&v->at, "", "'schema' is not a string");
	s = json_object_get_string(m);
	if (strcmp(s, GP_AN_SCHEMA) == 0)
		return 0;
	if (strncmp(s, "gpuprof.analyze/", 16) == 0)
		return cmp_bad(&v->at, "", "schema \"%.40s\": this gpuprof reads %s (was it written by a newer one?)",
			   s, GP_AN_SCHEMA);
	return cmp_bad(&v->at, "", "schema \"%.40s\", not %s: not a `gpuprof analyze --json` summary", s,
		   GP_AN_SCHEMA);
}

int cmp_summary_read(struct cmp_side *side, struct json_object *doc, const char *input,
		     struct gp_an_result **out, char *err, size_t cap)
{
	struct vx v = { { input, err, cap }, gp_an_result_new() };
	struct json_object *devs;
	size_t n;
	char p[48];
	int rc;

	*out = NULL;
	if (!v.r)
		return -ENOMEM;
	if ((rc = read_schema(&v, doc)) || (rc = read_options(&v, doc, side)) ||
	    (rc = read_traces(&v, doc)) ||
	    (rc = member(&v, doc, "", "devices", REQUIRED, json_type_array, &devs)))
		goto cleanup;
	n = json_object_array_length(devs);
	if (n && !(v.r->devices = arena_array(&v, n, sizeof(*v.r->devices)))) {
		rc = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "devices[%zu]", i);
		if ((rc = read_device(&v, json_object_array_get_idx(devs, i), p, &v.r->devices[i])))
			goto cleanup;
		v.r->ndevices = i + 1;
	}
	*out = v.r;
	v.r = NULL;
cleanup:
	if (rc == -ENOMEM)
		snprintf(err, cap, "out of memory");
	gp_an_result_free(v.r);
	return rc;
}
