/* A `gpuprof analyze --json` document (viewer/analyze/SCHEMA.md) into the
 * units compare and check work on: one per process and GPU.
 *
 * The document may come from anywhere (a baseline kept for months, a file
 * edited by hand), so every member used here is checked for its type and
 * range, and the first one wrong ends the load with its path in the message.
 * Members not used are not looked at: schema version 1 may grow. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cmp.h"

#define MAX_LAYER_DEPTH 64 /* analyze cuts its trees at 48 levels */
#define MAX_LAYER_NAME 65536
#define MAX_RANK (1 << 24)

struct vx {
	const char *input;
	char *err;
	size_t cap;
};

static int bad(struct vx *v, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct vx *v, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(v->err, v->cap, "%s: %s%s%s", v->input, path, *path ? ": " : "", msg);
	return -EINVAL;
}

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
		return bad(v, path, "'%s' is missing", key);
	}
	if (!m) {
		if (need != REQUIRED)
			return 0;
		return bad(v, path, "'%s' is null, not %s", key, type_name(t));
	}
	got = json_object_get_type(m);
	if (got != t && !(t == json_type_double && got == json_type_int))
		return bad(v, path, "'%s' is not %s", key, type_name(t));
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
		return bad(v, path, "'%s' holds a NUL character", key);
	*out = json_object_get_string(m);
	return 0;
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
		return bad(v, path, "'%s' is %s, not from %lld to %lld", key, json_object_to_json_string(m),
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
		return bad(v, path, "'%s' is %s, not a time in seconds", key, json_object_to_json_string(m));
	*out = x;
	return 0;
}

static int one_of(struct vx *v, const char *path, const char *key, const char *s,
		  const char *const *allowed)
{
	for (; *allowed; allowed++)
		if (strcmp(s, *allowed) == 0)
			return 0;
	return bad(v, path, "'%s' is \"%.40s\", not a value gpuprof.analyze/1 has", key, s);
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
static int rows_finish(struct vx *v, const char *path, struct rows *rs)
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
				return bad(v, path, "'%s' adds up to more than 8 PiB", rs->r[w].name);
			continue;
		}
		rs->r[++w] = rs->r[i];
	}
	rs->n = w + 1;
	return 0;
}

struct walk {
	struct vx *v;
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
		return bad(w->v, w->path, "a layer name longer than %d bytes", MAX_LAYER_NAME);
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
static int walk_nodes(struct walk *w, struct json_object *arr, int depth, uint64_t *sum)
{
	size_t n = json_object_array_length(arr);
	char where[160];
	int rc;

	*sum = 0;
	if (depth > MAX_LAYER_DEPTH)
		return bad(w->v, w->path, "the layer tree is more than %d levels deep", MAX_LAYER_DEPTH);
	for (size_t i = 0; i < n; i++) {
		struct json_object *node = json_object_array_get_idx(arr, i), *kids;
		const char *name;
		uint64_t bytes, below = 0;
		size_t saved;

		snprintf(where, sizeof(where), "%s: a layer under '%.60s'", w->path,
			 w->len ? w->name : "the root");
		if (!node || !json_object_is_type(node, json_type_object))
			return bad(w->v, where, "not an object");
		if ((rc = get_str(w->v, node, where, "name", REQUIRED, &name)) ||
		    (rc = get_bytes(w->v, node, where, "bytes", REQUIRED, &bytes, NULL)) ||
		    (rc = member(w->v, node, where, "children", OPTIONAL, json_type_array, &kids)))
			return rc;
		if ((rc = name_push(w, name, &saved)))
			return rc;
		if (kids && (rc = walk_nodes(w, kids, depth + 1, &below)))
			return rc;
		if (below > bytes)
			return bad(w->v, w->path, "the layers under '%.100s' hold more bytes than it",
				   w->name);
		if (bytes > below && (rc = row_add(&w->rows, w->name, w->len, bytes - below)))
			return rc;
		w->len = saved;
		w->name[w->len] = '\0';
		*sum += bytes;
		if (*sum > GP_CMP_MAX_BYTES)
			return bad(w->v, w->path, "the layers add up to more than 8 PiB");
	}
	return 0;
}

static int read_layers(struct vx *v, struct json_object *peak, const char *path, const char *mode,
		       struct cmp_unit *u)
{
	struct walk w = { .v = v, .sep = strcmp(mode, "cuda") == 0 ? " > " : "." };
	struct json_object *arr;
	char p[96];
	uint64_t sum;
	int rc;

	snprintf(p, sizeof(p), "%s.by_layer", path);
	w.path = p;
	if ((rc = member(v, peak, path, "by_layer", REQUIRED, json_type_array, &arr)) ||
	    (rc = walk_nodes(&w, arr, 1, &sum)) || (rc = rows_finish(v, p, &w.rows)))
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
 * the document says, since that is where a change outside PyTorch shows. */
static int read_categories(struct vx *v, struct json_object *peak, const char *path, struct cmp_unit *u)
{
	struct json_object *arr;
	struct rows rs = { 0 };
	char p[96], q[128];
	int rc;

	snprintf(p, sizeof(p), "%s.by_category", path);
	if ((rc = member(v, peak, path, "by_category", NULLABLE, json_type_array, &arr)) || !arr)
		return rc;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *c = json_object_array_get_idx(arr, i), *by;
		const char *name;
		uint64_t bytes, sum = 0;
		size_t first = rs.n;

		snprintf(q, sizeof(q), "%s[%zu]", p, i);
		if (!c || !json_object_is_type(c, json_type_object)) {
			rc = bad(v, q, "not an object");
			goto cleanup;
		}
		if ((rc = get_str(v, c, q, "category", REQUIRED, &name)) ||
		    (rc = get_bytes(v, c, q, "bytes", REQUIRED, &bytes, NULL)) ||
		    (rc = member(v, c, q, "by", OPTIONAL, json_type_array, &by)))
			goto cleanup;
		for (size_t j = 0; by && j < json_object_array_length(by); j++) {
			struct json_object *o = json_object_array_get_idx(by, j);
			const char *what;
			char r[160], label[512];
			uint64_t b;

			snprintf(r, sizeof(r), "%s.by[%zu]", q, j);
			if (!o || !json_object_is_type(o, json_type_object)) {
				rc = bad(v, r, "not an object");
				goto cleanup;
			}
			if ((rc = get_str(v, o, r, "name", REQUIRED, &what)) ||
			    (rc = get_bytes(v, o, r, "bytes", REQUIRED, &b, NULL)))
				goto cleanup;
			snprintf(label, sizeof(label), "%s: %s", name, what);
			if ((rc = row_add(&rs, label, strlen(label), b)))
				goto cleanup;
			sum += b;
		}
		if (by && json_object_array_length(by) && sum != bytes) {
			rc = bad(v, q, "its 'by' adds up to %llu bytes, not its %llu",
				 (unsigned long long)sum, (unsigned long long)bytes);
			goto cleanup;
		}
		if (rs.n == first && (rc = row_add(&rs, name, strlen(name), bytes)))
			goto cleanup;
	}
	if ((rc = rows_finish(v, p, &rs)))
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

static int read_top(struct vx *v, struct json_object *peak, const char *path, struct cmp_unit *u)
{
	struct json_object *arr;
	char q[128];
	size_t n;
	int rc;

	if ((rc = member(v, peak, path, "top", REQUIRED, json_type_array, &arr)))
		return rc;
	n = json_object_array_length(arr);
	if (!n) {
		u->top_complete = !u->live_allocations;
		u->top_cut = UINT64_MAX;
		return 0;
	}
	u->top = calloc(n, sizeof(*u->top));
	if (!u->top)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		struct cmp_alloc *a = &u->top[i];

		snprintf(q, sizeof(q), "%s.top[%zu]", path, i);
		if (!o || !json_object_is_type(o, json_type_object))
			return bad(v, q, "not an object");
		if ((rc = get_bytes(v, o, q, "bytes", REQUIRED, &a->bytes, NULL)) ||
		    (rc = get_str(v, o, q, "layer", NULLABLE, &a->layer)) ||
		    (rc = get_str(v, o, q, "category", NULLABLE, &a->category)) ||
		    (rc = get_str(v, o, q, "phase", NULLABLE, &a->phase)) ||
		    (rc = get_str(v, o, q, "op", NULLABLE, &a->op)) ||
		    (rc = get_str(v, o, q, "api", NULLABLE, &a->api)) ||
		    (rc = get_str(v, o, q, "what", NULLABLE, &a->what)))
			return rc;
		u->ntop++;
		if (i == 0 || a->bytes < u->top_cut)
			u->top_cut = a->bytes;
	}
	u->top_complete = u->ntop >= u->live_allocations;
	return 0;
}

static const char *const peak_whats[] = { "allocated", "reserved", "device", NULL };
static const char *const modes[] = { "cuda", "tensor", "native", NULL };

static int read_peak(struct vx *v, struct json_object *d, const char *path, struct cmp_unit *u)
{
	struct json_object *peak;
	char p[64];
	int known, rc;

	snprintf(p, sizeof(p), "%s.peak", path);
	if ((rc = member(v, d, path, "peak", NULLABLE, json_type_object, &peak)) || !peak)
		return rc;
	u->has_peak = 1;
	if ((rc = get_str(v, peak, p, "what", REQUIRED, &u->peak_what)) ||
	    (rc = one_of(v, p, "what", u->peak_what, peak_whats)) ||
	    (rc = get_bytes(v, peak, p, "bytes", REQUIRED, &u->peak_bytes, NULL)) ||
	    (rc = get_num(v, peak, p, "t", REQUIRED, &u->peak_t)) ||
	    (rc = get_int(v, peak, p, "step", NULLABLE, 0, INT64_C(1) << 53, &u->peak_step, &known)) ||
	    (rc = get_str(v, peak, p, "phase", NULLABLE, &u->peak_phase)) ||
	    (rc = get_str(v, peak, p, "layer", NULLABLE, &u->peak_layer)) ||
	    (rc = get_bytes(v, peak, p, "live_bytes", REQUIRED, &u->live_bytes, NULL)) ||
	    (rc = get_bytes(v, peak, p, "live_allocations", REQUIRED, &u->live_allocations, NULL)))
		return rc;
	if (!known)
		u->peak_step = -1;
	if ((rc = read_categories(v, peak, p, u)) || (rc = read_layers(v, peak, p, u->mode, u)))
		return rc;
	return read_top(v, peak, p, u);
}

static int read_amount(struct vx *v, struct json_object *sum, const char *path, const char *key,
		       int *known, uint64_t *peak)
{
	struct json_object *a;
	char p[96];
	int has, rc;

	snprintf(p, sizeof(p), "%s.%s", path, key);
	if ((rc = member(v, sum, path, key, REQUIRED, json_type_object, &a)) ||
	    (rc = get_bool(v, a, p, "known", known)) ||
	    (rc = get_bytes(v, a, p, "peak", NULLABLE, peak, &has)))
		return rc;
	if (*known && !has)
		return bad(v, p, "known, but its 'peak' is null");
	return 0;
}

struct trace {
	const char *path, *cmdline, *hostname, *mode;
	int64_t pid, rank, start;
	int cut_short, recovered;
};

static int read_traces(struct vx *v, struct json_object *doc, struct trace **out, size_t *nout)
{
	struct json_object *arr;
	struct trace *t;
	char p[48];
	size_t n;
	int rc, known;

	*out = NULL;
	*nout = 0;
	if ((rc = member(v, doc, "", "traces", REQUIRED, json_type_array, &arr)))
		return rc;
	n = json_object_array_length(arr);
	if (!n)
		return 0;
	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*out = t;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);

		snprintf(p, sizeof(p), "traces[%zu]", i);
		if (!o || !json_object_is_type(o, json_type_object))
			return bad(v, p, "not an object");
		if ((rc = get_str(v, o, p, "path", REQUIRED, &t[i].path)) ||
		    (rc = get_int(v, o, p, "pid", REQUIRED, 0, INT_MAX, &t[i].pid, NULL)) ||
		    (rc = get_str(v, o, p, "cmdline", NULLABLE, &t[i].cmdline)) ||
		    (rc = get_str(v, o, p, "hostname", NULLABLE, &t[i].hostname)) ||
		    (rc = get_int(v, o, p, "start_unix_ns", NULLABLE, 0, INT64_MAX, &t[i].start, &known)) ||
		    (rc = get_str(v, o, p, "mode", REQUIRED, &t[i].mode)) ||
		    (rc = one_of(v, p, "mode", t[i].mode, modes)) ||
		    (rc = get_bool(v, o, p, "cut_short", &t[i].cut_short)) ||
		    (rc = get_bool(v, o, p, "recovered", &t[i].recovered)))
			return rc;
		if (!known)
			t[i].start = -1;
		/* Not in gpuprof.analyze/1 yet: the torch.distributed rank, when
		 * the recorder learns it (RANK). Read when there. */
		if ((rc = get_int(v, o, p, "rank", OPTIONAL, 0, MAX_RANK, &t[i].rank, &known)))
			return rc;
		if (!known)
			t[i].rank = -1;
		*nout = i + 1;
	}
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
	free(u->top);
	memset(u, 0, sizeof(*u));
}

static int read_device(struct vx *v, struct json_object *d, const char *path, const struct trace *tr,
		       size_t ntr, const char *input, struct cmp_unit *u)
{
	struct json_object *sum;
	int64_t t, x;
	int known, rc;
	char p[64];

	if (!json_object_is_type(d, json_type_object))
		return bad(v, path, "not an object");
	if ((rc = get_int(v, d, path, "trace", REQUIRED, 0, (int64_t)ntr - 1, &t, NULL)))
		return ntr ? rc : bad(v, path, "a device, but 'traces' is empty");
	u->trace = tr[t].path;
	u->input = input ? input : tr[t].path;
	u->cmdline = tr[t].cmdline;
	u->hostname = tr[t].hostname;
	u->start_unix_ns = tr[t].start;
	u->rank = tr[t].rank;
	u->cut_short = tr[t].cut_short;
	u->recovered = tr[t].recovered;
	if ((rc = get_int(v, d, path, "pid", REQUIRED, 0, INT_MAX, &u->pid, NULL)) ||
	    (rc = get_int(v, d, path, "device", REQUIRED, 0, 63, &x, NULL)))
		return rc;
	u->device = (int)x;
	if (tr[t].pid != u->pid)
		return bad(v, path, "pid %lld, but its trace is of pid %lld", (long long)u->pid,
			   (long long)tr[t].pid);
	if ((rc = get_str(v, d, path, "name", NULLABLE, &u->gpu_name)) ||
	    (rc = get_bytes(v, d, path, "capacity", NULLABLE, &u->capacity, &known)) ||
	    (rc = get_str(v, d, path, "mode", REQUIRED, &u->mode)) ||
	    (rc = one_of(v, path, "mode", u->mode, modes)) ||
	    (rc = get_bytes(v, d, path, "oom_count", REQUIRED, &u->oom_count, NULL)) ||
	    (rc = member(v, d, path, "summary", REQUIRED, json_type_object, &sum)))
		return rc;
	snprintf(p, sizeof(p), "%s.summary", path);
	if ((rc = read_amount(v, sum, p, "allocated", &u->alloc_known, &u->alloc_peak)) ||
	    (rc = read_amount(v, sum, p, "reserved", &u->reserved_known, &u->reserved_peak)))
		return rc;
	return read_peak(v, d, path, u);
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

static int read_options(struct vx *v, struct json_object *doc, struct cmp_side *side)
{
	struct json_object *o;
	int64_t dev, pid;
	int has_dev, has_pid, rc;

	if ((rc = member(v, doc, "", "options", REQUIRED, json_type_object, &o)) ||
	    (rc = get_int(v, o, "options", "device", NULLABLE, 0, 63, &dev, &has_dev)) ||
	    (rc = get_int(v, o, "options", "process", NULLABLE, 0, INT_MAX, &pid, &has_pid)))
		return rc;
	/* a device missing from a filtered summary is no surprise: say why */
	if (has_dev && cmp_note(&side->notes, "%s: %s holds GPU %lld only (analyze --device)", side->label,
				v->input, (long long)dev))
		return -ENOMEM;
	if (has_pid && cmp_note(&side->notes, "%s: %s holds process %lld only (analyze --process)",
				side->label, v->input, (long long)pid))
		return -ENOMEM;
	return 0;
}

static int read_schema(struct vx *v, struct json_object *doc)
{
	struct json_object *m;
	const char *s;

	if (!json_object_is_type(doc, json_type_object))
		return bad(v, "", "not a JSON object, so not a `gpuprof analyze --json` summary");
	if (!json_object_object_get_ex(doc, "schema", &m))
		return bad(v, "", "no 'schema': not a `gpuprof analyze --json` summary");
	if (!json_object_is_type(m, json_type_string))
		return bad(v, "", "'schema' is not a string");
	s = json_object_get_string(m);
	if (strcmp(s, GP_AN_SCHEMA) == 0)
		return 0;
	if (strncmp(s, "gpuprof.analyze/", 16) == 0)
		return bad(v, "", "schema \"%.40s\": this gpuprof reads %s (was it written by a newer one?)",
			   s, GP_AN_SCHEMA);
	return bad(v, "", "schema \"%.40s\", not %s: not a `gpuprof analyze --json` summary", s,
		   GP_AN_SCHEMA);
}

int cmp_summary_units(struct cmp_side *side, struct json_object *doc, const char *input, int device,
		      char *err, size_t cap)
{
	struct vx v = { input ? input : side->label, err, cap };
	struct json_object *devs;
	struct trace *tr = NULL;
	size_t ntr = 0;
	char p[48];
	int rc;

	if ((rc = read_schema(&v, doc)) || (rc = read_options(&v, doc, side)) ||
	    (rc = read_traces(&v, doc, &tr, &ntr)) ||
	    (rc = member(&v, doc, "", "devices", REQUIRED, json_type_array, &devs)))
		goto cleanup;
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		struct cmp_unit u = { 0 };

		snprintf(p, sizeof(p), "devices[%zu]", i);
		rc = read_device(&v, json_object_array_get_idx(devs, i), p, tr, ntr, input, &u);
		if (!rc && device >= 0 && u.device != device) {
			cmp_unit_free(&u);
			continue;
		}
		if (rc || (rc = add_unit(side, &u))) {
			cmp_unit_free(&u);
			goto cleanup;
		}
	}
	for (size_t i = 0; i < ntr; i++) {
		const char *name = input ? input : tr[i].path;

		/* a run cut short has a lower peak than a full one: say it
		 * where a shrink would be read as good news */
		if (tr[i].cut_short &&
		    (rc = cmp_note(&side->notes, "%s: %s was cut short (the program did not finish): "
				   "its peak is that of the part recorded", side->label, name)))
			goto cleanup;
	}
cleanup:
	if (rc == -ENOMEM)
		snprintf(err, cap, "out of memory");
	free(tr);
	return rc;
}
