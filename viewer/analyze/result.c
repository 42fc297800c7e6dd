/* Builds the result document (SCHEMA.md) from what the analysis kept:
 * per process and device the summary, the peak with its groupings, the
 * steps and the leak verdict, the failed allocations with their advice. */
#include "result.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "leak.h"
#include "units.h"

#define LAYER_SEP '\x1f'
#define MAX_TREE_DEPTH 48

struct jb {
	struct an_analysis *a;
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

/* A layer as people read it: cuda mode's range path joined by " > ". */
static struct json_object *jlayer(struct jb *b, const struct an_str *s)
{
	char buf[3 * AN_STR_MAX + 1];
	size_t n = 0;

	if (!s)
		return NULL;
	if (!memchr(s->s, LAYER_SEP, s->len))
		return jstr(b, s->s);
	for (const char *p = s->s; *p && n + 4 < sizeof(buf); p++) {
		if (*p == LAYER_SEP) {
			memcpy(buf + n, " > ", 3);
			n += 3;
		} else {
			buf[n++] = *p;
		}
	}
	buf[n] = '\0';
	return jstr(b, buf);
}

static struct json_object *jbool(struct jb *b, int v)
{
	return chk(b, json_object_new_boolean(v));
}

static struct json_object *jnum(struct jb *b, double v, int decimals)
{
	char buf[64];

	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return chk(b, json_object_new_double_s(strtod(buf, NULL), buf));
}

/* seconds since the analysis' origin */
static struct json_object *jsec(struct jb *b, int64_t abs_ts)
{
	return jnum(b, (double)(abs_ts - b->a->origin) / 1e9, 6);
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
	if (o && json_object_object_add(o, k, v))
		b->oom = 1;
}

static void push(struct jb *b, struct json_object *arr, struct json_object *v)
{
	if (arr && json_object_array_add(arr, v))
		b->oom = 1;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* ---- groupings ---- */

struct grp {
	const char *name;
	uint64_t bytes, count;
};

struct grpset {
	struct gp_u64map by_key; /* key -> struct grp */
	struct grp **list;
	size_t n, cap;
	int oom;
};

static void grp_add(struct grpset *g, uint64_t key, const char *name, uint64_t bytes)
{
	struct grp *e = gp_u64map_get(&g->by_key, key);

	if (!e) {
		if (g->n == g->cap) {
			size_t cap = g->cap ? g->cap * 2 : 16;
			struct grp **l = realloc(g->list, cap * sizeof(*l));

			if (!l) {
				g->oom = 1;
				return;
			}
			g->list = l;
			g->cap = cap;
		}
		e = calloc(1, sizeof(*e));
		if (!e || gp_u64map_put(&g->by_key, key, e)) {
			free(e);
			g->oom = 1;
			return;
		}
		e->name = name;
		g->list[g->n++] = e;
	}
	e->bytes += bytes;
	e->count++;
}

static int grp_cmp(const void *x, const void *y)
{
	const struct grp *a = *(struct grp *const *)x, *b = *(struct grp *const *)y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void grp_free(struct grpset *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->list[i]);
	free(g->list);
	gp_u64map_free(&g->by_key);
	memset(g, 0, sizeof(*g));
}

/* [{key: name, bytes, share, count}], largest first */
static struct json_object *grp_json(struct jb *b, struct grpset *g, const char *key,
				    uint64_t whole)
{
	struct json_object *arr = jarr(b);

	if (g->oom)
		b->oom = 1;
	qsort(g->list, g->n, sizeof(*g->list), grp_cmp);
	for (size_t i = 0; i < g->n; i++) {
		struct json_object *o = jobj(b);

		put(b, o, key, jstr(b, g->list[i]->name));
		put(b, o, "bytes", jint(b, (int64_t)g->list[i]->bytes));
		put(b, o, "share", jnum(b, share(g->list[i]->bytes, whole), 4));
		put(b, o, "count", jint(b, (int64_t)g->list[i]->count));
		push(b, arr, o);
	}
	return arr;
}

/* ---- the layer tree ---- */

struct node {
	char *name;
	uint64_t bytes, count;
	struct node **kids;
	size_t n, cap;
};

static void node_free(struct node *nd)
{
	if (!nd)
		return;
	for (size_t i = 0; i < nd->n; i++)
		node_free(nd->kids[i]);
	free(nd->kids);
	free(nd->name);
	free(nd);
}

/* The child called name[0..len): paths come sorted component by component
 * (by_layer), so it can only be the last one made. */
static struct node *node_child(struct node *nd, const char *name, size_t len)
{
	struct node *c;

	if (nd->n) {
		c = nd->kids[nd->n - 1];
		if (strlen(c->name) == len && !memcmp(c->name, name, len))
			return c;
	}
	if (nd->n == nd->cap) {
		size_t cap = nd->cap ? nd->cap * 2 : 4;
		struct node **k = realloc(nd->kids, cap * sizeof(*k));

		if (!k)
			return NULL;
		nd->kids = k;
		nd->cap = cap;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strndup(name, len))) {
		free(c);
		return NULL;
	}
	nd->kids[nd->n++] = c;
	return c;
}

/* Adds bytes (of count allocations) along the path; the separator splits
 * it into levels. */
static int tree_add(struct node *root, const char *path, char sep, uint64_t bytes, uint64_t count)
{
	struct node *nd = root;
	const char *p = path;
	int depth = 0;

	root->bytes += bytes;
	root->count += count;
	while (*p) {
		const char *e = strchr(p, sep);
		size_t len;

		if (!e || ++depth >= MAX_TREE_DEPTH)
			e = p + strlen(p);
		len = (size_t)(e - p);
		nd = node_child(nd, p, len);
		if (!nd)
			return -1;
		nd->bytes += bytes;
		nd->count += count;
		p = *e ? e + 1 : e;
	}
	return 0;
}

static int node_cmp(const void *x, const void *y)
{
	const struct node *a = *(struct node *const *)x, *b = *(struct node *const *)y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->name, b->name);
}

static struct json_object *tree_json(struct jb *b, struct node *nd, uint64_t whole)
{
	struct json_object *o = jobj(b);

	put(b, o, "name", jstr(b, nd->name));
	put(b, o, "bytes", jint(b, (int64_t)nd->bytes));
	put(b, o, "share", jnum(b, share(nd->bytes, whole), 4));
	put(b, o, "count", jint(b, (int64_t)nd->count));
	if (nd->n) {
		struct json_object *kids = jarr(b);

		qsort(nd->kids, nd->n, sizeof(*nd->kids), node_cmp);
		for (size_t i = 0; i < nd->n; i++)
			push(b, kids, tree_json(b, nd->kids[i], whole));
		put(b, o, "children", kids);
	}
	return o;
}

/* ---- a set of allocations alive at one moment ---- */

struct member {
	struct an_rec *r;
	int cat;
	struct an_str *label; /* CAT_OTHER: what it is */
};

struct set {
	struct member *m;
	size_t n;
	uint64_t bytes;
	uint64_t cat_bytes[CAT_N];
	int torch;
	int steps; /* the process marked steps */
};

static void set_free(struct jb *b, struct set *s)
{
	for (size_t i = 0; i < s->n; i++)
		an_str_unref(&b->a->st, s->m[i].label);
	free(s->m);
	memset(s, 0, sizeof(*s));
}

static int set_make(struct jb *b, const struct an_proc *p, struct an_rec **recs, size_t n,
		    struct set *s)
{
	memset(s, 0, sizeof(*s));
	s->torch = p->mode != MODE_CUDA;
	s->steps = p->has_steps;
	if (!n)
		return 0;
	s->m = calloc(n, sizeof(*s->m));
	if (!s->m)
		return -1;
	s->n = n;
	for (size_t i = 0; i < n; i++) {
		char label[256];

		s->m[i].r = recs[i];
		s->bytes += recs[i]->bytes;
		if (!s->torch)
			continue;
		s->m[i].cat = an_classify(p, recs[i], label, sizeof(label));
		s->cat_bytes[s->m[i].cat] += recs[i]->bytes;
		if (s->m[i].cat == CAT_OTHER &&
		    !(s->m[i].label = an_str_intern(&b->a->st, label, strlen(label))))
			return -1;
	}
	return 0;
}

static const char *no_layer(const struct set *s)
{
	return s->torch ? "(no module)" : "(no NVTX range)";
}

static struct json_object *by_category(struct jb *b, const struct set *s)
{
	struct json_object *arr = jarr(b);
	int order[CAT_N];

	for (int c = 0; c < CAT_N; c++)
		order[c] = c;
	/* largest first, stable */
	for (int i = 1; i < CAT_N; i++)
		for (int j = i; j > 0 && s->cat_bytes[order[j]] > s->cat_bytes[order[j - 1]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int k = 0; k < CAT_N; k++) {
		int c = order[k];
		struct json_object *o;
		uint64_t count = 0;

		if (!s->cat_bytes[c])
			continue;
		for (size_t i = 0; i < s->n; i++)
			count += s->m[i].cat == c;
		o = jobj(b);
		put(b, o, "category", jstr(b, an_cat_names[c]));
		put(b, o, "bytes", jint(b, (int64_t)s->cat_bytes[c]));
		put(b, o, "share", jnum(b, share(s->cat_bytes[c], s->bytes), 4));
		put(b, o, "count", jint(b, (int64_t)count));
		if (c == CAT_OTHER) {
			struct grpset g = { 0 };

			for (size_t i = 0; i < s->n; i++)
				if (s->m[i].cat == CAT_OTHER)
					grp_add(&g, (uint64_t)(uintptr_t)s->m[i].label,
						s->m[i].label->s, s->m[i].r->bytes);
			put(b, o, "by", grp_json(b, &g, "name", s->bytes));
			grp_free(&g);
		}
		push(b, arr, o);
	}
	return arr;
}

/* Component order: the separator sorts before any other byte, so that
 * every path under a prefix comes right after it. */
static char layer_sep;

static int layer_cmp(const void *x, const void *y)
{
	const unsigned char *a = (const unsigned char *)(*(struct grp *const *)x)->name;
	const unsigned char *b = (const unsigned char *)(*(struct grp *const *)y)->name;

	for (;; a++, b++) {
		unsigned ca = *a == (unsigned char)layer_sep ? 1 : *a;
		unsigned cb = *b == (unsigned char)layer_sep ? 1 : *b;

		if (ca != cb || !ca)
			return (int)ca - (int)cb;
	}
}

static struct json_object *by_layer(struct jb *b, const struct set *s)
{
	struct node root = { 0 };
	struct json_object *kids;
	struct grpset g = { 0 };
	char sep = s->torch ? '.' : LAYER_SEP;

	/* one entry per distinct layer, then the tree in sorted order: a
	 * million layers cost n log n, not n squared */
	for (size_t i = 0; i < s->n; i++) {
		const struct an_rec *r = s->m[i].r;

		grp_add(&g, (uint64_t)(uintptr_t)r->layer, r->layer ? r->layer->s : "", r->bytes);
	}
	if (g.oom)
		b->oom = 1;
	layer_sep = sep;
	qsort(g.list, g.n, sizeof(*g.list), layer_cmp);
	for (size_t i = 0; i < g.n; i++) {
		const char *path = g.list[i]->name[0] ? g.list[i]->name : no_layer(s);

		if (tree_add(&root, path, g.list[i]->name[0] ? sep : '\0', g.list[i]->bytes,
			     g.list[i]->count)) {
			b->oom = 1;
			break;
		}
	}
	grp_free(&g);
	kids = jarr(b);
	qsort(root.kids, root.n, sizeof(*root.kids), node_cmp);
	for (size_t i = 0; i < root.n; i++)
		push(b, kids, tree_json(b, root.kids[i], s->bytes));
	for (size_t i = 0; i < root.n; i++)
		node_free(root.kids[i]);
	free(root.kids);
	return kids;
}

static struct json_object *by_key(struct jb *b, const struct set *s, int which, const char *key)
{
	struct grpset g = { 0 };
	struct json_object *arr;
	int any = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct an_rec *r = s->m[i].r;
		const struct an_str *k = NULL;
		const char *name;

		switch (which) {
		case 0: /* phase when made */
			grp_add(&g, r->phase, an_phase_names[r->phase], r->bytes);
			any = 1;
			continue;
		case 1:
			k = r->op;
			name = k ? k->s : "(no op range)";
			break;
		default:
			k = r->api;
			name = k ? k->s : "(API call not in the trace)";
			break;
		}
		any |= k != NULL;
		grp_add(&g, (uint64_t)(uintptr_t)k, name, r->bytes);
	}
	arr = any ? grp_json(b, &g, key, s->bytes) : NULL;
	grp_free(&g);
	return arr;
}

static int member_cmp(const void *x, const void *y)
{
	const struct member *a = x, *b = y;

	if (a->r->bytes != b->r->bytes)
		return a->r->bytes > b->r->bytes ? -1 : 1;
	if (a->r->ts != b->r->ts)
		return a->r->ts < b->r->ts ? -1 : 1;
	return a->r->addr < b->r->addr ? -1 : a->r->addr > b->r->addr;
}

static struct json_object *rec_json(struct jb *b, const struct set *s, const struct member *m)
{
	const struct an_rec *r = m->r;
	struct json_object *o = jobj(b);
	char addr[24];

	snprintf(addr, sizeof(addr), "0x%" PRIx64, r->addr);
	put(b, o, "bytes", jint(b, (int64_t)r->bytes));
	put(b, o, "addr", jstr(b, addr));
	put(b, o, "t", jsec(b, r->ts));
	put(b, o, "step", s->steps ? jint(b, r->step) : NULL);
	put(b, o, "phase", jstr(b, s->torch ? an_phase_names[r->phase] : NULL));
	put(b, o, "layer", jlayer(b, r->layer));
	put(b, o, "category", jstr(b, s->torch ? an_cat_names[m->cat] : NULL));
	put(b, o, "what", jstr(b, an_str_c(m->label)));
	put(b, o, "api", jstr(b, an_str_c(r->api)));
	put(b, o, "op", jstr(b, an_str_c(r->op)));
	put(b, o, "kind", jstr(b, an_kind_names[r->kind]));
	put(b, o, "freed_t", (r->flags & R_FREED) ? jsec(b, r->free_ts) : NULL);
	return o;
}

/* The groupings of a set, into o. */
static void describe(struct jb *b, struct json_object *o, struct set *s, int top)
{
	struct json_object *arr;

	put(b, o, "live_bytes", jint(b, (int64_t)s->bytes));
	put(b, o, "live_allocations", jint(b, (int64_t)s->n));
	put(b, o, "by_category", s->torch ? by_category(b, s) : NULL);
	put(b, o, "by_layer", by_layer(b, s));
	put(b, o, "by_phase", s->torch ? by_key(b, s, 0, "phase") : NULL);
	put(b, o, "by_op", by_key(b, s, 1, "op"));
	put(b, o, "by_api", by_key(b, s, 2, "api"));
	qsort(s->m, s->n, sizeof(*s->m), member_cmp);
	arr = jarr(b);
	for (size_t i = 0; i < s->n && i < (size_t)top; i++)
		push(b, arr, rec_json(b, s, &s->m[i]));
	put(b, o, "top", arr);
}

/* ---- per trace ---- */

/* ---- PyTorch's allocator history (--torch-history) ---- */

static struct json_object *history_json(struct jb *b, const struct an_proc *p)
{
	const struct an_history *h = &p->src->hist;
	struct json_object *o;

	if (!h->devices)
		return NULL;
	o = jobj(b);
	put(b, o, "points", jint(b, (int64_t)h->n));
	put(b, o, "marks", jint(b, (int64_t)p->src->hist_marks));
	put(b, o, "complete", jbool(b, (h->complete & h->devices) == h->devices && !h->gaps &&
					    (h->ended & h->devices) == h->devices));
	return o;
}

static void history_notes(struct jb *b, const struct an_proc *p, struct json_object *notes)
{
	const struct an_history *h = &p->src->hist;
	char line[512];

	if (p->history_asked && !h->devices && !p->src->hist_marks) {
		push(b, notes, jstr(b, "--torch-history was asked, but the trace holds no "
				    "gpuprof:torch.history marks (PyTorch writes its history at exit: "
				    "did the program exit normally?): allocated is sampled"));
		return;
	}
	for (int d = 0; d < AN_MAX_DEVICES; d++) {
		uint64_t bit = 1ull << d;

		if (!(h->devices & bit))
			continue;
		if (!(h->complete & bit)) {
			snprintf(line, sizeof(line),
				 "PyTorch's allocator history of device %d begins at %.3f s, not with the "
				 "program (its ring, GPUPROF_TORCH_HISTORY_ENTRIES, dropped the oldest "
				 "entries, or it began after the program had allocated: CUDA started "
				 "before gpuprof's hooks were loaded): allocated before that is sampled", d,
				 (double)(p->src->ts_base_ns + h->first_ts[d] - b->a->origin) / 1e9);
			push(b, notes, jstr(b, line));
		}
		if (h->gaps & bit) {
			snprintf(line, sizeof(line),
				 "parts of PyTorch's allocator history of device %d are missing (marks "
				 "lost): what happened in them is not seen", d);
			push(b, notes, jstr(b, line));
		}
		if (!(h->ended & bit)) {
			snprintf(line, sizeof(line),
				 "PyTorch's allocator history of device %d ends early (its last part is "
				 "missing)", d);
			push(b, notes, jstr(b, line));
		}
	}
}

static struct json_object *trace_json(struct jb *b, const struct an_proc *p)
{
	const struct an_source *src = p->src;
	struct json_object *o = jobj(b), *notes = jarr(b), *d;
	static const char *const modes[] = { "cuda", "tensor", "native" };
	char line[512];

	put(b, o, "path", jstr(b, src->path));
	put(b, o, "pid", jint(b, src->pid));
	put(b, o, "cmdline", jstr(b, an_str_c(src->cmdline)));
	put(b, o, "hostname", jstr(b, an_str_c(src->hostname)));
	put(b, o, "mode", jstr(b, modes[src->mode]));
	if (p->torch_version || p->alloc_conf || p->backend) {
		struct json_object *t = jobj(b);

		put(b, t, "version", jstr(b, an_str_c(p->torch_version)));
		put(b, t, "alloc_conf", jstr(b, an_str_c(p->alloc_conf)));
		put(b, t, "backend", jstr(b, an_str_c(p->backend)));
		put(b, o, "torch", t);
	} else {
		put(b, o, "torch", NULL);
	}
	put(b, o, "start_unix_ns", jint(b, (int64_t)src->start_unix_ns));
	put(b, o, "rank", src->rank >= 0 ? jint(b, src->rank) : NULL);
	put(b, o, "complete", jbool(b, !src->cut_short && !src->end_recovered));
	put(b, o, "cut_short", jbool(b, src->cut_short));
	put(b, o, "recovered", jbool(b, src->end_recovered));
	put(b, o, "clean_exit", src->have_end && !src->end_recovered ? jbool(b, src->end_clean) : NULL);
	put(b, o, "events", jint(b, (int64_t)src->events));
	put(b, o, "late_events", jint(b, (int64_t)src->ro.late));
	put(b, o, "window_overflows", jint(b, (int64_t)src->ro.overflow));
	put(b, o, "max_events_held", jint(b, (int64_t)src->ro.max_n));
	put(b, o, "watermarks", jbool(b, src->ro.n_wm > 0));
	d = jobj(b);
	put(b, d, "cupti", jint(b, (int64_t)src->dropped_cupti));
	put(b, d, "host", jint(b, (int64_t)src->dropped_host));
	put(b, d, "marked", jint(b, (int64_t)src->dropped_marks));
	put(b, o, "dropped", d);
	put(b, o, "late_memory_records", jint(b, (int64_t)src->late_records));
	put(b, o, "unmatched_frees", jint(b, (int64_t)p->unmatched_frees));
	put(b, o, "reused_addresses", jint(b, (int64_t)p->reused_live));
	put(b, o, "unattributed_allocations", jint(b, (int64_t)p->unattributed));
	put(b, o, "profiler_windows", jint(b, p->profiler_windows));
	put(b, o, "torch_history", history_json(b, p));

	if (src->cut_short) {
		snprintf(line, sizeof(line),
			 "the trace was cut short (%s): what it holds up to %.3f s is analyzed",
			 src->in.gzip_cut ? "its gzip stream ends early" :
			 src->in.gzip_damaged ? "its gzip data is damaged" : "no gpuprof.end",
			 src->last_ts == INT64_MIN ? 0.0 :
			 (double)(src->ts_base_ns + src->last_ts - b->a->origin) / 1e9);
		push(b, notes, jstr(b, line));
	} else if (src->end_recovered) {
		push(b, notes, jstr(b, "the program was killed: `gpuprof recover` kept what the trace held "
				    "up to its last flush"));
	} else if (src->have_end && !src->end_clean) {
		push(b, notes, jstr(b, "the program did not exit normally (gpuprof.end says clean: false)"));
	}
	if (src->dropped_cupti || src->dropped_host || src->dropped_marks) {
		snprintf(line, sizeof(line), "the recorder lost %" PRIu64 " records: numbers may be low",
			 src->dropped_cupti + src->dropped_host + src->dropped_marks);
		push(b, notes, jstr(b, line));
	}
	if (src->ro.late) {
		snprintf(line, sizeof(line),
			 "%" PRIu64 " events arrived after their time window had been analyzed "
			 "(out of order by more than the recorder promised); they were counted late",
			 src->ro.late);
		push(b, notes, jstr(b, line));
	}
	if (p->unattributed && p->mode != MODE_CUDA) {
		snprintf(line, sizeof(line),
			 "%" PRIu64 " allocations have no CUDA API call in the trace: no thread, "
			 "so no layer (unattributed)", p->unattributed);
		push(b, notes, jstr(b, line));
	}
	if (p->unmatched_frees) {
		snprintf(line, sizeof(line),
			 "%" PRIu64 " frees of memory allocated before the trace or in a gap of it",
			 p->unmatched_frees);
		push(b, notes, jstr(b, line));
	}
	if (p->profiler_windows) {
		snprintf(line, sizeof(line),
			 "torch.profiler ran %u time(s) inside the trace: its allocations went to it, "
			 "not to gpuprof", p->profiler_windows);
		push(b, notes, jstr(b, line));
	}
	if (src->statics == STATICS_NONE)
		push(b, notes, jstr(b, "module globals (__device__ variables, device_static) were not "
				    "recorded (GPUPROF_RECORD without statics)"));
	if (p->mode == MODE_NATIVE && !p->named_segs.count)
		push(b, notes, jstr(b, "PyTorch did not name its segments (it did not exit normally?): "
				    "reserved includes device memory of other libraries"));
	history_notes(b, p, notes);
	put(b, o, "notes", notes);
	return o;
}

/* ---- per process and device ---- */

static struct json_object *num_or_null(struct jb *b, int known, uint64_t v)
{
	return known ? jint(b, (int64_t)v) : NULL;
}

/* A Moment with the gap reserved - allocated. */
static struct json_object *frag_moment(struct jb *b, const struct an_proc *p,
				       const struct an_frag_moment *m)
{
	struct json_object *x = jobj(b);

	put(b, x, "gap", jint(b, (int64_t)an_frag_gap(m)));
	put(b, x, "reserved", jint(b, (int64_t)m->res));
	put(b, x, "allocated", jint(b, (int64_t)m->alloc));
	put(b, x, "t", jsec(b, m->ts));
	put(b, x, "step", p->has_steps ? jint(b, m->step) : NULL);
	put(b, x, "phase", jstr(b, p->mode == MODE_CUDA ? NULL : an_phase_names[m->phase]));
	return x;
}

static struct json_object *summary_json(struct jb *b, const struct an_pd *pd)
{
	const struct an_proc *p = pd->proc;
	struct json_object *o = jobj(b), *x, *kinds, *f;
	int native = p->mode == MODE_NATIVE;
	int res_known;

	/* allocated */
	x = jobj(b);
	if (native) {
		put(b, x, "known", jbool(b, pd->has_torch_mem));
		put(b, x, "end", num_or_null(b, pd->has_torch_mem, pd->torch_allocated));
		put(b, x, "peak", num_or_null(b, pd->has_torch_mem, pd->torch_allocated_peak));
		put(b, x, "peak_t", pd->torch_hist && pd->torch_allocated_peak
					    ? jsec(b, pd->torch_allocated_peak_ts) : NULL);
		put(b, x, "source", jstr(b, pd->torch_hist ? "torch history"
					    : pd->has_torch_mem ? "torch marks" : NULL));
	} else {
		put(b, x, "known", jbool(b, 1));
		put(b, x, "end", jint(b, (int64_t)pd->fw_live));
		put(b, x, "peak", jint(b, (int64_t)pd->fw_peak));
		put(b, x, "peak_t", pd->fw_peak ? jsec(b, pd->fw_peak_ts) : NULL);
		put(b, x, "source", jstr(b, "allocations"));
	}
	put(b, o, "allocated", x);
	/* reserved */
	x = jobj(b);
	if (native) {
		put(b, x, "known", jbool(b, 1));
		put(b, x, "end", jint(b, (int64_t)pd->fw_live));
		put(b, x, "peak", jint(b, (int64_t)pd->fw_peak));
		put(b, x, "peak_t", pd->fw_peak ? jsec(b, pd->fw_peak_ts) : NULL);
		put(b, x, "source", jstr(b, "segments"));
	} else {
		res_known = pd->has_pool;
		put(b, x, "known", jbool(b, res_known));
		put(b, x, "end", num_or_null(b, res_known, pd->pool_sum));
		put(b, x, "peak", num_or_null(b, res_known, pd->pool_peak));
		put(b, x, "peak_t", res_known && pd->pool_peak ? jsec(b, pd->pool_peak_ts) : NULL);
		put(b, x, "source", jstr(b, res_known ? "pools" : NULL));
	}
	put(b, o, "reserved", x);
	x = jobj(b);
	put(b, x, "end", jint(b, (int64_t)(pd->fw_live + pd->other_live)));
	put(b, x, "peak", jint(b, (int64_t)pd->total_peak));
	put(b, x, "peak_t", pd->total_peak ? jsec(b, pd->total_peak_ts) : NULL);
	put(b, o, "device_total", x);
	x = jobj(b);
	put(b, x, "end", jint(b, (int64_t)pd->other_live));
	put(b, x, "peak", jint(b, (int64_t)pd->other_peak));
	put(b, x, "allocations", jint(b, (int64_t)pd->other_allocs));
	put(b, o, "other", p->mode == MODE_CUDA ? NULL : x);
	if (p->mode == MODE_CUDA)
		json_object_put(x);
	put(b, o, "allocations", jint(b, (int64_t)pd->fw_allocs));
	put(b, o, "frees", jint(b, (int64_t)pd->frees));
	put(b, o, "live_allocations_end", jint(b, (int64_t)pd->live_count));
	put(b, o, "max_live_allocations", jint(b, (int64_t)pd->max_live_count));
	kinds = jobj(b);
	for (int k = K_DEVICE_STATIC; k < K_N; k++) {
		if (!pd->kind_allocs[k])
			continue;
		x = jobj(b);
		put(b, x, "end", jint(b, (int64_t)pd->kind_live[k]));
		put(b, x, "peak", jint(b, (int64_t)pd->kind_peak[k]));
		put(b, x, "allocations", jint(b, (int64_t)pd->kind_allocs[k]));
		put(b, kinds, an_kind_names[k], x);
	}
	put(b, o, "kinds", kinds);
	f = jobj(b);
	put(b, f, "known", jbool(b, pd->frag_known));
	put(b, f, "source", jstr(b, !pd->frag_known ? NULL : !native ? "pools"
				   : pd->torch_hist ? "torch history" : "torch marks"));
	if (!pd->frag_known) {
		put(b, f, "why", jstr(b, native ? "in native mode the bytes allocated inside PyTorch's "
					  "segments are not known from CUDA alone"
					: "no stream-ordered pool in this trace"));
		put(b, f, "worst", NULL);
		put(b, f, "at_peak", NULL);
		put(b, f, "end", NULL);
	} else {
		uint64_t res = native ? pd->torch_reserved : pd->pool_sum;
		uint64_t al = native ? pd->torch_allocated : pd->fw_live;

		put(b, f, "why", NULL);
		put(b, f, "worst", an_frag_gap(&pd->frag_worst) ? frag_moment(b, p, &pd->frag_worst) : NULL);
		put(b, f, "at_peak", pd->frag_peak.res ? frag_moment(b, p, &pd->frag_peak) : NULL);
		put(b, f, "end", jint(b, (int64_t)(res > al ? res - al : 0)));
	}
	put(b, o, "fragmentation", f);
	return o;
}

static struct json_object *peak_json(struct jb *b, struct an_pd *pd, int top, struct set *out_set)
{
	struct an_proc *p = pd->proc;
	struct json_object *o;
	struct an_rec **recs;
	size_t n;
	int oom;

	if (!pd->fw_peak)
		return NULL;
	o = jobj(b);
	put(b, o, "what", jstr(b, p->mode == MODE_NATIVE ? "reserved" :
			       p->mode == MODE_TENSOR ? "allocated" : "device"));
	put(b, o, "bytes", jint(b, (int64_t)pd->fw_peak));
	put(b, o, "t", jsec(b, pd->peak_ts));
	put(b, o, "step", p->has_steps ? jint(b, pd->peak_step) : NULL);
	put(b, o, "phase", jstr(b, p->mode == MODE_CUDA ? NULL : an_phase_names[pd->peak_phase]));
	put(b, o, "layer", jlayer(b, pd->peak_layer));
	put(b, o, "other", jint(b, (int64_t)pd->peak_other));
	put(b, o, "device_total", jint(b, (int64_t)(pd->fw_peak + pd->peak_other)));
	put(b, o, "device_static", jint(b, (int64_t)pd->peak_static));
	put(b, o, "reserved", num_or_null(b, pd->peak_reserved_known, pd->peak_reserved));
	recs = an_snap_members(pd, &pd->peak, &n, &oom);
	if (oom || set_make(b, p, recs, n, out_set))
		b->oom = 1;
	free(recs);
	describe(b, o, out_set, top);
	return o;
}

static struct json_object *steps_json(struct jb *b, const struct an_pd *pd)
{
	struct json_object *o = jobj(b), *arr = jarr(b);

	put(b, o, "count", jint(b, (int64_t)pd->marks_seen));
	put(b, o, "stride", jint(b, pd->stride));
	for (size_t i = 0; i < pd->nseries; i++) {
		const struct an_step_pt *s = &pd->series[i];
		struct json_object *e = jobj(b);

		put(b, e, "step", jint(b, s->step));
		put(b, e, "t", jsec(b, s->ts));
		put(b, e, "live", jint(b, (int64_t)s->fw));
		put(b, e, "reserved", num_or_null(b, s->reserved_known, s->reserved));
		put(b, e, "total", jint(b, (int64_t)s->total));
		push(b, arr, e);
	}
	put(b, o, "series", arr);
	return o;
}

static struct json_object *leak_json(struct jb *b, struct an_pd *pd, uint64_t capacity,
				     struct an_leak *lk)
{
	struct an_proc *p = pd->proc;
	static const char *const verdicts[] = { "no steps", "too few steps", "none", "leak" };
	struct json_object *o = jobj(b);

	an_leak_fit(pd, capacity, lk);
	put(b, o, "verdict", jstr(b, verdicts[lk->verdict]));
	put(b, o, "warmup_steps", jint(b, AN_LEAK_WARMUP));
	if (lk->verdict == LEAK_NO_STEPS) {
		put(b, o, "why", jstr(b, p->mode == MODE_CUDA ? "the trace has no step:N marks (the "
				    "PyTorch hooks make them)" : "no optimizer step was marked"));
		return o;
	}
	put(b, o, "points", jint(b, (int64_t)lk->n));
	if (lk->verdict == LEAK_TOO_FEW)
		return o;
	put(b, o, "since_step", jint(b, lk->since_step));
	put(b, o, "last_step", jint(b, lk->last_step));
	put(b, o, "rate_per_step", jnum(b, lk->slope, 1));
	put(b, o, "rate_per_second", lk->per_second > 0 ? jnum(b, lk->per_second, 1) : NULL);
	put(b, o, "r2", jnum(b, lk->r2, 4));
	put(b, o, "grew", jint(b, lk->grew));
	put(b, o, "shrank", jint(b, lk->shrank));
	put(b, o, "flat", jint(b, lk->flat));
	put(b, o, "live_first", jint(b, (int64_t)lk->live_first));
	put(b, o, "live_last", jint(b, (int64_t)lk->live_last));
	put(b, o, "steps_until_full", lk->verdict == LEAK_FOUND && lk->steps_to_full >= 0
					      ? jnum(b, lk->steps_to_full, 0) : NULL);
	if (lk->verdict == LEAK_FOUND) {
		/* who holds what survives: allocations made after the warm-up,
		 * at least one full step before the last boundary, still live
		 * there */
		struct an_rec **recs;
		size_t n, k = 0;
		int oom;
		uint32_t lo = lk->since_step + 1, hi = pd->step_snap_step;
		struct set s;

		if (hi > lo)
			hi--;
		recs = an_snap_members(pd, &pd->step_snap, &n, &oom);
		for (size_t i = 0; i < n; i++) {
			struct an_rec *r = recs[i];
			int fw = p->mode == MODE_TENSOR ? (r->flags & R_ASYNC) != 0 : !(r->flags & R_OTHER);

			if (fw && r->step >= lo && r->step <= hi)
				recs[k++] = r;
		}
		if (oom || set_make(b, p, recs, k, &s)) {
			b->oom = 1;
		} else {
			struct json_object *sv = jobj(b);
			uint32_t steps = hi - lo + 1;

			put(b, sv, "from_step", jint(b, lo));
			put(b, sv, "to_step", jint(b, hi));
			put(b, sv, "bytes", jint(b, (int64_t)s.bytes));
			put(b, sv, "per_step", jnum(b, (double)s.bytes / steps, 1));
			put(b, sv, "allocations", jint(b, (int64_t)s.n));
			put(b, sv, "by_layer", by_layer(b, &s));
			put(b, sv, "by_phase", s.torch ? by_key(b, &s, 0, "phase") : NULL);
			put(b, sv, "by_op", by_key(b, &s, 1, "op"));
			put(b, o, "survivors", sv);
			set_free(b, &s);
		}
		free(recs);
	}
	return o;
}

/* ---- failed allocations ---- */

static void advise(struct jb *b, struct json_object *arr, const char *kind, const char *text)
{
	struct json_object *o = jobj(b);

	put(b, o, "kind", jstr(b, kind));
	put(b, o, "text", jstr(b, text));
	push(b, arr, o);
}

/* The largest layers among members of category cat, "a, b and c". */
static void top_layers(const struct set *s, int cat, char *out, size_t cap)
{
	struct grpset g = { 0 };
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < s->n; i++)
		if (s->m[i].cat == cat && s->m[i].r->layer)
			grp_add(&g, (uint64_t)(uintptr_t)s->m[i].r->layer, s->m[i].r->layer->s,
				s->m[i].r->bytes);
	qsort(g.list, g.n, sizeof(*g.list), grp_cmp);
	for (size_t i = 0; i < g.n && i < 3; i++) {
		char sz[32];
		size_t len = strlen(out);

		an_fmt_bytes(sz, sizeof(sz), g.list[i]->bytes);
		snprintf(out + len, cap - len, "%s%s (%s)", i ? ", " : "", g.list[i]->name, sz);
		n++;
	}
	grp_free(&g);
}

static struct json_object *advice_json(struct jb *b, const struct an_pd *pd, const struct an_oom *o,
				       const struct set *s, uint64_t capacity, const struct an_leak *lk)
{
	const struct an_proc *p = pd->proc;
	struct json_object *arr = jarr(b);
	char text[1024], x[32], y[32], z[32];
	uint64_t device = o->has_meminfo ? o->total : capacity;
	uint64_t held = o->total_live + o->static_live;

	if (device && o->request > device) {
		an_fmt_bytes(x, sizeof(x), o->request);
		an_fmt_bytes(y, sizeof(y), device);
		snprintf(text, sizeof(text),
			 "the request alone (%s) is larger than the whole device (%s): no setting "
			 "makes it fit; make that tensor smaller (batch, sequence length) or split it "
			 "across devices", x, y);
		advise(b, arr, "request_too_large", text);
		return arr;
	}
	if (s->torch && o->fw_live && s->cat_bytes[CAT_ACTIVATIONS] * 10 >= o->fw_live * 4) {
		char layers[600];

		an_fmt_bytes(x, sizeof(x), s->cat_bytes[CAT_ACTIVATIONS]);
		top_layers(s, CAT_ACTIVATIONS, layers, sizeof(layers));
		snprintf(text, sizeof(text),
			 "activations hold %.0f%% (%s) of PyTorch's memory: a smaller batch, "
			 "activation checkpointing (torch.utils.checkpoint) of the largest layers%s%s, "
			 "or mixed precision (torch.autocast with bfloat16/float16) would shrink them",
			 100.0 * share(s->cat_bytes[CAT_ACTIVATIONS], o->fw_live), x,
			 layers[0] ? ": " : "", layers);
		advise(b, arr, "activations", text);
	}
	if (p->mode == MODE_NATIVE && o->released) {
		an_fmt_bytes(x, sizeof(x), o->released);
		if (p->expandable_segments)
			snprintf(text, sizeof(text),
				 "PyTorch held %s in cached segments it could not use for this request "
				 "(it released them after the failure): fragmentation, although "
				 "expandable_segments is already on", x);
		else
			snprintf(text, sizeof(text),
				 "PyTorch held %s in cached segments it could not use for this request "
				 "(it released them after the failure%s): fragmentation; "
				 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets segments grow "
				 "instead of leaving holes", x,
				 o->recovered ? " and the retry succeeded, at the cost of a slow cache flush"
					      : "");
		advise(b, arr, "fragmentation", text);
	} else if (pd->frag_known && o->reserved_known && p->mode == MODE_TENSOR &&
		   o->reserved > o->fw_live && o->reserved - o->fw_live >= o->request) {
		an_fmt_bytes(x, sizeof(x), o->reserved - o->fw_live);
		snprintf(text, sizeof(text),
			 "the allocator's pool held %s unused, more than the request, yet could not "
			 "serve it: fragmentation (traced in tensor mode, with cudaMallocAsync; trace "
			 "with --mode native to see PyTorch's own allocator)", x);
		advise(b, arr, "fragmentation", text);
	}
	if (s->torch) {
		uint64_t earlier = 0;

		for (size_t i = 0; i < s->n; i++) {
			const struct an_rec *r = s->m[i].r;
			int c = s->m[i].cat;

			if (p->has_steps && r->step < o->step &&
			    (c == CAT_ACTIVATIONS || c == CAT_INPUTS || c == CAT_TEMPORARIES ||
			     (c == CAT_OTHER && !(r->flags & R_OTHER))))
				earlier += r->bytes;
		}
		if ((lk && lk->verdict == LEAK_FOUND) || (o->fw_live && earlier * 10 >= o->fw_live)) {
			an_fmt_bytes(x, sizeof(x), earlier);
			if (lk && lk->verdict == LEAK_FOUND) {
				an_fmt_bytes(y, sizeof(y), (uint64_t)lk->slope);
				snprintf(text, sizeof(text),
					 "memory grew by %s per step since step %u (see Leaks); %s made in "
					 "earlier steps was still held at the failure: tensors kept across "
					 "steps (a loss or outputs stored with their graph: keep .item() or "
					 ".detach())", y, lk->since_step, x);
			} else {
				snprintf(text, sizeof(text),
					 "%s made in earlier steps (not parameters, gradients or optimizer "
					 "state) was still held at the failure: tensors kept across steps "
					 "(a loss or outputs stored with their graph: keep .item() or "
					 ".detach())", x);
			}
			advise(b, arr, "held_from_earlier_steps", text);
		}
	}
	if (s->torch && o->other_live && (o->other_live * 10 >= held || o->other_live >= o->request)) {
		char by[400] = "";
		struct grpset g = { 0 };

		for (size_t i = 0; i < s->n; i++)
			if (s->m[i].r->flags & R_OTHER)
				grp_add(&g, (uint64_t)(uintptr_t)s->m[i].label,
					s->m[i].label ? s->m[i].label->s : "?", s->m[i].r->bytes);
		qsort(g.list, g.n, sizeof(*g.list), grp_cmp);
		for (size_t i = 0; i < g.n && i < 3; i++) {
			size_t len = strlen(by);

			an_fmt_bytes(z, sizeof(z), g.list[i]->bytes);
			snprintf(by + len, sizeof(by) - len, "%s%s %s", i ? ", " : "", g.list[i]->name, z);
		}
		grp_free(&g);
		an_fmt_bytes(x, sizeof(x), o->other_live);
		snprintf(text, sizeof(text),
			 "%s is device memory allocated outside PyTorch (%s): libraries' workspaces "
			 "and buffers; it is not PyTorch's to free", x, by);
		advise(b, arr, "outside_pytorch", text);
	}
	if (o->has_meminfo && o->total > o->free && o->total - o->free > held) {
		uint64_t elsewhere = o->total - o->free - held;

		if (elsewhere >= o->request || elsewhere * 10 >= o->total) {
			an_fmt_bytes(x, sizeof(x), elsewhere);
			snprintf(text, sizeof(text),
				 "%s of the device was in use but not by this trace's allocations: the "
				 "CUDA context, or other processes on the same GPU (nvidia-smi lists them)",
				 x);
			advise(b, arr, "outside_trace", text);
		}
	}
	return arr;
}

static struct json_object *oom_json(struct jb *b, struct an_pd *pd, struct an_oom *o, int detailed,
				    uint64_t capacity, const struct an_leak *lk, int top)
{
	struct an_proc *p = pd->proc;
	struct json_object *j = jobj(b);
	struct set s = { 0 };

	put(b, j, "t", jsec(b, o->ts));
	put(b, j, "step", p->has_steps ? jint(b, o->step) : NULL);
	put(b, j, "phase", jstr(b, p->mode == MODE_CUDA ? NULL : an_phase_names[o->phase]));
	put(b, j, "layer", jlayer(b, o->layer));
	put(b, j, "op", jstr(b, an_str_c(o->op)));
	put(b, j, "api", jstr(b, an_str_c(o->api)));
	put(b, j, "tid", jint(b, o->tid));
	put(b, j, "request", jint(b, (int64_t)o->request));
	put(b, j, "free", num_or_null(b, o->has_meminfo, o->free));
	put(b, j, "total", num_or_null(b, o->has_meminfo, o->total));
	put(b, j, "result", jint(b, o->result));
	put(b, j, "allocated", jint(b, (int64_t)o->fw_live));
	put(b, j, "other", jint(b, (int64_t)o->other_live));
	put(b, j, "device_total", jint(b, (int64_t)o->total_live));
	put(b, j, "device_static", jint(b, (int64_t)o->static_live));
	put(b, j, "reserved", num_or_null(b, o->reserved_known, o->reserved));
	put(b, j, "outside_trace", o->has_meminfo && o->total > o->free + o->total_live + o->static_live
				   ? jint(b, (int64_t)(o->total - o->free - o->total_live - o->static_live))
				   : NULL);
	put(b, j, "retries", jint(b, o->retries));
	put(b, j, "released_after", jint(b, (int64_t)o->released));
	put(b, j, "recovered", jbool(b, o->recovered));
	put(b, j, "detailed", jbool(b, detailed));
	if (detailed) {
		struct an_rec **recs;
		size_t n;
		int oom;

		recs = an_snap_members(pd, &o->snap, &n, &oom);
		if (oom || set_make(b, p, recs, n, &s))
			b->oom = 1;
		free(recs);
		describe(b, j, &s, top);
	}
	put(b, j, "advice", advice_json(b, pd, o, &s, capacity, lk));
	set_free(b, &s);
	return j;
}

static struct json_object *device_json(struct jb *b, struct an_pd *pd, int top)
{
	struct an_proc *p = pd->proc;
	const struct an_devinfo *di = &p->src->dev[pd->device];
	static const char *const modes[] = { "cuda", "tensor", "native" };
	struct json_object *o = jobj(b), *ooms = jarr(b);
	struct an_leak lk;
	struct set peak = { 0 };

	put(b, o, "pid", jint(b, p->src->pid));
	put(b, o, "trace", jint(b, p->idx));
	put(b, o, "device", jint(b, pd->device));
	put(b, o, "name", jstr(b, an_str_c(di->name)));
	put(b, o, "uuid", jstr(b, an_str_c(di->uuid)));
	put(b, o, "capacity", num_or_null(b, di->total_memory != 0, di->total_memory));
	put(b, o, "mode", jstr(b, modes[p->mode]));
	put(b, o, "summary", summary_json(b, pd));
	put(b, o, "peak", peak_json(b, pd, top, &peak));
	set_free(b, &peak);
	put(b, o, "steps", steps_json(b, pd));
	put(b, o, "leak", leak_json(b, pd, di->total_memory, &lk));
	for (size_t i = 0; i < pd->nooms; i++)
		push(b, ooms, oom_json(b, pd, &pd->ooms[i], 1, di->total_memory, &lk, top));
	if (pd->oom_count > pd->nooms)
		push(b, ooms, oom_json(b, pd, &pd->last_oom, 0, di->total_memory, &lk, top));
	put(b, o, "ooms", ooms);
	put(b, o, "oom_count", jint(b, (int64_t)pd->oom_count));
	return o;
}

static struct json_object *gpus_json(struct jb *b)
{
	struct an_analysis *a = b->a;
	struct json_object *arr = jarr(b);

	for (size_t g = 0; g < a->ngpus; g++) {
		struct an_gpu *gpu = &a->gpus[g];
		struct json_object *o, *by;
		const struct an_devinfo *di;

		if (gpu->npds < 2)
			continue;
		di = &gpu->pds[0]->proc->src->dev[gpu->pds[0]->device];
		o = jobj(b);
		put(b, o, "uuid", jstr(b, gpu->uuid->s));
		put(b, o, "name", jstr(b, an_str_c(di->name)));
		put(b, o, "capacity", num_or_null(b, di->total_memory != 0, di->total_memory));
		put(b, o, "peak", jint(b, (int64_t)gpu->peak));
		put(b, o, "peak_t", gpu->peak ? jsec(b, gpu->peak_ts) : NULL);
		by = jarr(b);
		for (size_t i = 0; i < gpu->npds; i++) {
			struct json_object *e = jobj(b);

			put(b, e, "pid", jint(b, gpu->pds[i]->proc->src->pid));
			put(b, e, "device", jint(b, gpu->pds[i]->device));
			put(b, e, "bytes", jint(b, (int64_t)gpu->peak_by_pd[i]));
			push(b, by, e);
		}
		put(b, o, "by_process", by);
		push(b, arr, o);
	}
	return arr;
}

struct json_object *an_result_build(struct an_analysis *a)
{
	const struct gp_an_settings *s = a->settings;
	struct jb b = { a, 0 };
	struct json_object *doc = jobj(&b), *traces = jarr(&b), *devs = jarr(&b), *opts = jobj(&b);

	put(&b, doc, "schema", jstr(&b, GP_AN_SCHEMA));
	put(&b, doc, "gpuprof_version", jstr(&b, GPUPROF_VERSION));
	put(&b, opts, "top", jint(&b, s->top));
	put(&b, opts, "device", s->device >= 0 ? jint(&b, s->device) : NULL);
	put(&b, opts, "process", s->pid >= 0 ? jint(&b, s->pid) : NULL);
	put(&b, doc, "options", opts);
	put(&b, doc, "time_origin_ns", jint(&b, a->origin));
	for (size_t i = 0; i < a->nprocs; i++)
		push(&b, traces, trace_json(&b, a->procs[i]));
	put(&b, doc, "traces", traces);
	for (size_t i = 0; i < a->nprocs; i++) {
		struct an_proc *p = a->procs[i];

		for (int d = 0; d < AN_MAX_DEVICES; d++) {
			if (!p->pd[d] || (s->device >= 0 && d != s->device))
				continue;
			push(&b, devs, device_json(&b, p->pd[d], s->top));
		}
	}
	put(&b, doc, "devices", devs);
	put(&b, doc, "gpus", gpus_json(&b));
	if (b.oom) {
		json_object_put(doc);
		return NULL;
	}
	return doc;
}
