/* A `gpuprof analyze --json` document (viewer/analyze/SCHEMA.md) into the
 * result analyze makes in memory (viewer/analyze/result.h), so that compare
 * and check have one input model whether a side was a trace or a summary
 * (unit.c makes the units of either).
 *
 * Only the members compare uses are read and filled (cmp.h lists them);
 * the rest of the result stays zero, and a result read here is never
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

static int get_bool(struct vx *v, struct json_object *o, const char *path, const char *key, int *out)
{
	struct json_object *m;
	int rc = member(v, o, path, key, REQUIRED, json_type_boolean, &m);

	*out = rc ? 0 : json_object_get_boolean(m);
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
	snprintf(where, sizeof(where), "%s: a layer under '%.60s'", path, parent ? parent : "the root");
	for (size_t i = 0; i < n; i++) {
		struct json_object *node = json_object_array_get_idx(arr, i), *kids;
		struct gp_an_node *nd = &nodes[i];

		if (!node || !json_object_is_type(node, json_type_object))
			return cmp_bad(&v->at, where, "not an object");
		if ((rc = get_str(v, node, where, "name", REQUIRED, &nd->name)) ||
		    (rc = get_bytes(v, node, where, "bytes", REQUIRED, &nd->bytes, NULL)) ||
		    (rc = member(v, node, where, "children", OPTIONAL, json_type_array, &kids)))
			return rc;
		if (kids) {
			char below[64];

			snprintf(below, sizeof(below), "%s%s%s", parent ? parent : "", parent ? sep : "",
				 nd->name);
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
		if ((rc = get_str(v, c, q, "category", REQUIRED, &cat->category)) ||
		    (rc = get_bytes(v, c, q, "bytes", REQUIRED, &cat->bytes, NULL)) ||
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
			if ((rc = get_str(v, o, r, "name", REQUIRED, &cat->by.v[j].name)) ||
			    (rc = get_bytes(v, o, r, "bytes", REQUIRED, &cat->by.v[j].bytes, NULL)))
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
		if ((rc = get_bytes(v, o, q, "bytes", REQUIRED, &a->bytes, NULL)) ||
		    (rc = get_str(v, o, q, "layer", NULLABLE, &a->layer)) ||
		    (rc = get_str(v, o, q, "category", NULLABLE, &a->category)) ||
		    (rc = get_str(v, o, q, "phase", NULLABLE, &a->phase)) ||
		    (rc = get_str(v, o, q, "op", NULLABLE, &a->op)) ||
		    (rc = get_str(v, o, q, "api", NULLABLE, &a->api)) ||
		    (rc = get_str(v, o, q, "what", NULLABLE, &a->what)))
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
	const char *when = NULL;
	int known, rc, when_idx = GP_AN_STEP_IN;

	snprintf(p, sizeof(p), "%s.peak", path);
	if ((rc = member(v, d, path, "peak", NULLABLE, json_type_object, &peak)) || !peak)
		return rc;
	dev->has_peak = 1;
	if ((rc = get_str(v, peak, p, "what", REQUIRED, &pk->what)) ||
	    (rc = one_of(v, p, "what", pk->what, peak_whats, 3, NULL)) ||
	    (rc = get_bytes(v, peak, p, "bytes", REQUIRED, &pk->bytes, NULL)) ||
	    (rc = get_num(v, peak, p, "t", REQUIRED, &pk->t)) ||
	    (rc = get_int(v, peak, p, "step", NULLABLE, 0, INT64_C(1) << 53, &pk->step, &known)) ||
	    (rc = get_str(v, peak, p, "phase", NULLABLE, &pk->phase)) ||
	    (rc = get_str(v, peak, p, "layer", NULLABLE, &pk->layer)) ||
	    (rc = get_bytes(v, peak, p, "live_bytes", REQUIRED, &pk->set.live_bytes, NULL)) ||
	    (rc = get_bytes(v, peak, p, "live_allocations", REQUIRED, &pk->set.live_allocations, NULL)))
		return rc;
	if (!known)
		pk->step = -1;
	/* step_when: added within version 1; a summary without it says "in" */
	if ((rc = get_str(v, peak, p, "step_when", OPTIONAL, &when)) ||
	    (when && (rc = one_of(v, p, "step_when", when, gp_an_step_when_names, GP_AN_STEP_WHEN_N,
				  &when_idx))))
		return rc;
	pk->step_when = (uint8_t)when_idx;
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
	    (rc = get_bool(v, a, p, "known", &out->known)) ||
	    (rc = get_bytes(v, a, p, "peak", NULLABLE, &out->peak.v, &out->peak.known)))
		return rc;
	if (out->known && !out->peak.known)
		return cmp_bad(&v->at, p, "known, but its 'peak' is null");
	return 0;
}

static int read_mode(struct vx *v, struct json_object *o, const char *path, enum gp_an_mode *out)
{
	const char *s;
	int m = 0, rc;

	if ((rc = get_str(v, o, path, "mode", REQUIRED, &s)) ||
	    (rc = one_of(v, path, "mode", s, gp_an_mode_names, GP_AN_MODE_N, &m)))
		return rc;
	*out = (enum gp_an_mode)m;
	return 0;
}

static int read_traces(struct vx *v, struct json_object *doc)
{
	struct json_object *arr;
	struct gp_an_trace *t;
	char p[48];
	size_t n;
	int rc, known;

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
		if ((rc = get_str(v, o, p, "path", REQUIRED, &t[i].path)) ||
		    (rc = get_int(v, o, p, "pid", REQUIRED, 0, INT_MAX, &t[i].pid, NULL)) ||
		    (rc = get_str(v, o, p, "cmdline", NULLABLE, &t[i].cmdline)) ||
		    (rc = get_str(v, o, p, "hostname", NULLABLE, &t[i].hostname)) ||
		    (rc = get_int(v, o, p, "start_unix_ns", NULLABLE, 0, INT64_MAX, &t[i].start_unix_ns,
				  &known)) ||
		    (rc = read_mode(v, o, p, &t[i].mode)) ||
		    (rc = get_bool(v, o, p, "cut_short", &t[i].cut_short)) ||
		    (rc = get_bool(v, o, p, "recovered", &t[i].recovered)))
			return rc;
		if (!known)
			t[i].start_unix_ns = -1;
		/* added within gpuprof.analyze/1: the torch.distributed rank,
		 * when the recorder learned it (RANK). Read when there. */
		if ((rc = get_int(v, o, p, "rank", OPTIONAL, 0, MAX_RANK, &t[i].rank, &known)))
			return rc;
		if (!known)
			t[i].rank = -1;
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
		if ((rc = get_bytes(v, lo, p, "count", REQUIRED, &u->ooms_left_out.count, NULL)) ||
		    (rc = get_bytes(v, lo, p, "recovered", REQUIRED, &u->ooms_left_out.recovered, NULL)))
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
		if ((rc = get_int(v, o, p, "step", NULLABLE, 0, INT64_MAX, &x->step, &known)) ||
		    (rc = get_bytes(v, o, p, "request", REQUIRED, &x->request, NULL)) ||
		    (rc = get_str(v, o, p, "phase", NULLABLE, &x->phase)) ||
		    (rc = get_str(v, o, p, "layer", NULLABLE, &x->layer)) ||
		    (rc = get_bool(v, o, p, "recovered", &x->recovered)))
			return rc;
		if (!known)
			x->step = -1;
		if ((rc = get_opt_bool(v, o, p, "raised", &x->raised, &known)) ||
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
	int64_t t, x;
	size_t ntr = v->r->ntraces;
	int rc;
	char p[64];

	if (!json_object_is_type(d, json_type_object))
		return cmp_bad(&v->at, path, "not an object");
	if ((rc = get_int(v, d, path, "trace", REQUIRED, 0, (int64_t)ntr - 1, &t, NULL)))
		return ntr ? rc : cmp_bad(&v->at, path, "a device, but 'traces' is empty");
	u->trace = (size_t)t;
	if ((rc = get_int(v, d, path, "pid", REQUIRED, 0, INT_MAX, &u->pid, NULL)) ||
	    (rc = get_int(v, d, path, "device", REQUIRED, 0, 63, &x, NULL)))
		return rc;
	u->device = (int)x;
	if (v->r->traces[t].pid != u->pid)
		return cmp_bad(&v->at, path, "pid %lld, but its trace is of pid %lld", (long long)u->pid,
			   (long long)v->r->traces[t].pid);
	if ((rc = get_str(v, d, path, "name", NULLABLE, &u->name)) ||
	    (rc = get_bytes(v, d, path, "capacity", NULLABLE, &u->capacity.v, &u->capacity.known)) ||
	    (rc = read_mode(v, d, path, &u->mode)) ||
	    (rc = get_bytes(v, d, path, "oom_count", REQUIRED, &u->oom_count, NULL)) ||
	    (rc = read_ooms(v, d, path, u)) ||
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
	int64_t dev, pid;
	int has_dev, has_pid, rc;

	if ((rc = member(v, doc, "", "options", REQUIRED, json_type_object, &o)) ||
	    (rc = get_int(v, o, "options", "device", NULLABLE, 0, 63, &dev, &has_dev)) ||
	    (rc = get_int(v, o, "options", "process", NULLABLE, 0, INT_MAX, &pid, &has_pid)))
		return rc;
	v->r->device = has_dev ? (int)dev : -1;
	v->r->process = has_pid ? pid : -1;
	/* a device missing from a filtered summary is no surprise: say why */
	if (has_dev && cmp_note(&side->notes, "%s: %s holds GPU %lld only (analyze --device)", side->label,
				v->at.input, (long long)dev))
		return -ENOMEM;
	if (has_pid && cmp_note(&side->notes, "%s: %s holds process %lld only (analyze --process)",
				side->label, v->at.input, (long long)pid))
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
