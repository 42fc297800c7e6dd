/* The result (result.h) from what the analysis kept: per trace its facts
 * and notes; per process and device the summary, the peak with its
 * groupings, the steps and the leak verdict, the failed allocations with
 * their advice (advice.c); the GPUs several processes shared. Everything is
 * copied into the result's arena: the analysis is freed after this. */
#include "build.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "exporters/env_vars.h"
#include "layers.h"
#include "leak.h"
#include "set.h"
#include "units.h"

#define LAYER_SEP '\x1f'
#define MAX_TREE_DEPTH 48

struct bld {
	struct an_analysis *a;
	struct gp_an_result *r;
	int oom;
};

/* n elements of size bytes, zeroed, in the arena; NULL for none */
static void *arr(struct bld *b, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	if (n > SIZE_MAX / size) {
		b->oom = 1;
		return NULL;
	}
	p = gp_an_alloc(b->r, n * size);
	if (!p)
		b->oom = 1;
	return p;
}

static const char *str(struct bld *b, const char *s)
{
	const char *c;

	if (!s)
		return NULL;
	c = gp_an_strndup(b->r, s, strlen(s));
	if (!c)
		b->oom = 1;
	return c;
}

static const char *astr(struct bld *b, const struct an_str *s)
{
	return str(b, an_str_c(s));
}

/* A layer as people read it: cuda mode's range path joined by " > ". */
static const char *layer_text(struct bld *b, const char *path)
{
	char buf[3 * AN_STR_MAX + 1];
	size_t n = 0;

	if (!strchr(path, LAYER_SEP))
		return str(b, path);
	for (const char *p = path; *p && n + 4 < sizeof(buf); p++) {
		if (*p == LAYER_SEP) {
			memcpy(buf + n, " > ", 3);
			n += 3;
		} else {
			buf[n++] = *p;
		}
	}
	buf[n] = '\0';
	return str(b, buf);
}

static const char *layer_str(struct bld *b, const struct an_str *s)
{
	return s ? layer_text(b, s->s) : NULL;
}

/* seconds since the analysis' origin */
static double sec(struct bld *b, int64_t abs_ts)
{
	return gp_an_round((double)(abs_ts - b->a->origin) / 1e9, 6);
}

static double share(uint64_t part, uint64_t whole)
{
	return gp_an_round(whole ? (double)part / (double)whole : 0.0, 4);
}

static struct gp_an_opt opt(int known, uint64_t v)
{
	return (struct gp_an_opt){ known != 0, known ? v : 0 };
}

static const char *phase_name(const struct an_proc *p, uint8_t phase)
{
	return p->mode == MODE_CUDA ? NULL : an_phase_names[phase];
}

/* ---- groupings ---- */

/* largest first; names copied */
static void groups_fill(struct bld *b, struct an_grpset *g, uint64_t whole, struct gp_an_groups *out)
{
	if (g->oom)
		b->oom = 1;
	an_grp_sort(g);
	out->present = 1;
	out->n = g->n;
	out->v = arr(b, g->n, sizeof(*out->v));
	for (size_t i = 0; out->v && i < g->n; i++) {
		out->v[i].name = str(b, g->list[i]->name);
		out->v[i].bytes = g->list[i]->bytes;
		out->v[i].share = share(g->list[i]->bytes, whole);
		out->v[i].count = g->list[i]->count;
	}
	if (!out->v)
		out->n = 0;
}

/* ---- the layer tree ---- */

struct node {
	char *name;
	uint64_t bytes, count;
	uint64_t cat[CAT_N]; /* its bytes by category (the icicle's colour) */
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

/* Adds bytes (of count allocations, of category cat) along the path; the
 * separator splits it into levels. */
static int tree_add(struct node *root, const char *path, char sep, uint64_t bytes, uint64_t count, int cat)
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
		nd->cat[cat] += bytes;
		p = *e ? e + 1 : e;
	}
	return 0;
}

static int node_cmp(const void *x, const void *y)
{
	const struct node *a = *(struct node *const *)x, *b = *(struct node *const *)y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return an_layer_name_cmp(a->name, b->name);
}

/* nd's children, largest first, into the arena; then in the order people
 * read them, with runs of alike siblings (layers.h) */
static void tree_fill(struct bld *b, struct node *nd, uint64_t whole, int cats, struct gp_an_node **out,
		      size_t *nout)
{
	struct gp_an_node *v;

	*out = NULL;
	*nout = 0;
	if (!nd->n)
		return;
	qsort(nd->kids, nd->n, sizeof(*nd->kids), node_cmp);
	v = arr(b, nd->n, sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < nd->n; i++) {
		v[i].name = str(b, nd->kids[i]->name);
		v[i].bytes = nd->kids[i]->bytes;
		v[i].share = share(nd->kids[i]->bytes, whole);
		v[i].count = nd->kids[i]->count;
		if (cats) {
			int top = 0;

			for (int c = 1; c < CAT_N; c++)
				if (nd->kids[i]->cat[c] > nd->kids[i]->cat[top])
					top = c;
			v[i].category = an_cat_names[top];
			v[i].category_bytes = (int64_t)nd->kids[i]->cat[top];
		} else {
			v[i].category_bytes = -1;
		}
		tree_fill(b, nd->kids[i], whole, cats, &v[i].children, &v[i].nchildren);
	}
	if (an_layers_order(b->r, v, nd->n, whole))
		b->oom = 1;
	*out = v;
	*nout = nd->n;
}

/* ---- a set of allocations alive at one moment ---- */

static const char *no_layer(const struct an_set *s)
{
	return s->torch ? "(no module)" : "(no NVTX range)";
}

static void by_category(struct bld *b, const struct an_set *s, struct gp_an_set *out)
{
	int order[CAT_N], k = 0;

	for (int c = 0; c < CAT_N; c++)
		order[c] = c;
	/* largest first, stable */
	for (int i = 1; i < CAT_N; i++)
		for (int j = i; j > 0 && s->cat_bytes[order[j]] > s->cat_bytes[order[j - 1]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	out->has_categories = 1;
	for (int c = 0; c < CAT_N; c++)
		k += s->cat_bytes[c] != 0;
	out->categories = arr(b, (size_t)k, sizeof(*out->categories));
	if (!out->categories)
		return;
	for (int i = 0; i < CAT_N; i++) {
		int c = order[i];
		struct gp_an_category *e;
		uint64_t count = 0;

		if (!s->cat_bytes[c])
			continue;
		for (size_t m = 0; m < s->n; m++)
			count += s->m[m].cat == c;
		e = &out->categories[out->ncategories++];
		e->category = an_cat_names[c];
		e->bytes = s->cat_bytes[c];
		e->share = share(s->cat_bytes[c], s->bytes);
		e->count = count;
		if (c == CAT_OTHER) {
			struct an_grpset g = { 0 };

			for (size_t m = 0; m < s->n; m++)
				if (s->m[m].cat == CAT_OTHER)
					an_grp_add(&g, (uint64_t)(uintptr_t)s->m[m].label,
						   s->m[m].label->s, s->m[m].r->bytes);
			groups_fill(b, &g, s->bytes, &e->by);
			an_grp_free(&g);
		}
	}
}

/* Component order: the separator sorts before any other byte, so that
 * every path under a prefix comes right after it. */
static char layer_sep;

static int layer_cmp(const void *x, const void *y)
{
	const unsigned char *a = (const unsigned char *)(*(struct an_grp *const *)x)->name;
	const unsigned char *b = (const unsigned char *)(*(struct an_grp *const *)y)->name;

	for (;; a++, b++) {
		unsigned ca = *a == (unsigned char)layer_sep ? 1 : *a;
		unsigned cb = *b == (unsigned char)layer_sep ? 1 : *b;

		if (ca != cb || !ca)
			return (int)ca - (int)cb;
	}
}

struct layer_cat {
	struct an_grp *grp; /* a layer's allocations of one category */
	int cat;
};

static int layer_cat_cmp(const void *x, const void *y)
{
	const struct layer_cat *a = x, *b = y;

	return layer_cmp(&a->grp, &b->grp);
}

static void by_layer(struct bld *b, const struct an_set *s, struct gp_an_node **out, size_t *nout)
{
	struct node root = { 0 };
	struct an_grpset g[CAT_N] = { 0 };
	struct layer_cat *list = NULL;
	size_t n = 0;
	char sep = s->torch ? '.' : LAYER_SEP;

	/* one entry per distinct layer and category, then the tree in sorted
	 * order: a million layers cost n log n, not n squared */
	for (size_t i = 0; i < s->n; i++) {
		const struct an_rec *r = s->m[i].r;
		int cat = s->m[i].cat >= 0 && s->m[i].cat < CAT_N ? s->m[i].cat : CAT_OTHER;

		an_grp_add(&g[cat], (uint64_t)(uintptr_t)r->layer, r->layer ? r->layer->s : "", r->bytes);
	}
	for (int c = 0; c < CAT_N; c++) {
		b->oom |= g[c].oom != 0;
		n += g[c].n;
	}
	if (n && !(list = malloc(n * sizeof(*list))))
		b->oom = 1;
	n = 0;
	for (int c = 0; c < CAT_N && list; c++)
		for (size_t i = 0; i < g[c].n; i++)
			list[n++] = (struct layer_cat){ g[c].list[i], c };
	layer_sep = sep;
	if (n)
		qsort(list, n, sizeof(*list), layer_cat_cmp);
	for (size_t i = 0; i < n; i++) {
		const char *name = list[i].grp->name, *path = name[0] ? name : no_layer(s);

		if (tree_add(&root, path, name[0] ? sep : '\0', list[i].grp->bytes, list[i].grp->count, list[i].cat)) {
			b->oom = 1;
			break;
		}
	}
	free(list);
	for (int c = 0; c < CAT_N; c++)
		an_grp_free(&g[c]);
	/* categories where the set has them (the torch modes) */
	tree_fill(b, &root, s->bytes, s->torch, out, nout);
	for (size_t i = 0; i < root.n; i++)
		node_free(root.kids[i]);
	free(root.kids);
}

enum { BY_PHASE, BY_OP, BY_API };

/* null (not present) when no member has the key */
static void by_key(struct bld *b, const struct an_set *s, int which, struct gp_an_groups *out)
{
	struct an_grpset g = { 0 };
	int any = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct an_rec *r = s->m[i].r;
		const struct an_str *k = NULL;
		const char *name;

		switch (which) {
		case BY_PHASE: /* when made */
			an_grp_add(&g, r->phase, an_phase_names[r->phase], r->bytes);
			any = 1;
			continue;
		case BY_OP:
			k = r->op;
			name = k ? k->s : "(no op range)";
			break;
		default:
			k = r->api_library ? r->api_library : r->api;
			name = k ? k->s : r->library ? r->library->s : "(API call not in the trace)";
			if (!k)
				k = r->library;
			break;
		}
		any |= k != NULL;
		an_grp_add(&g, (uint64_t)(uintptr_t)k, name, r->bytes);
	}
	if (any)
		groups_fill(b, &g, s->bytes, out);
	an_grp_free(&g);
}

/* ---- source lines (Python stacks, --stacks) ---- */

/* A frame as a report names it: the file's base name (the JSON has it
 * whole), its line, its function. */
static const char *frame_name(struct bld *b, const struct an_sframe *f)
{
	const char *base = strrchr(f->file->s, '/');
	char buf[2 * AN_STR_MAX + 32];

	snprintf(buf, sizeof(buf), "%s:%u in %s", base ? base + 1 : f->file->s, f->line, f->func->s);
	return str(b, buf);
}

static const struct an_stack *stack_of(const struct an_proc *p, const struct an_rec *r)
{
	return r->stack ? an_stacks_get(&p->src->stacks, r->stack) : NULL;
}

/* The source line an allocation stands for: its stack's user frame. */
static const struct an_sframe *line_of(const struct an_proc *p, const struct an_rec *r)
{
	const struct an_stack *st = stack_of(p, r);

	return st && st->user >= 0 ? &st->f[st->user] : NULL;
}

struct line_grp {
	const struct an_stack *rep; /* the stack of its largest allocation */
	uint64_t rep_bytes, bytes, count;
};

static int line_grp_cmp(const void *x, const void *y)
{
	const struct line_grp *a = *(struct line_grp *const *)x, *b = *(struct line_grp *const *)y;
	const char *ka = a->rep ? a->rep->key->s : "", *kb = b->rep ? b->rep->key->s : "";

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(ka, kb);
}

/* The group of what has no line: with --stacks made without Python frames
 * (other libraries); without, mostly blocks a module names, whose stacks
 * the hook does not read. */
#define AN_NO_STACK_NAME "(no Python stack)"
#define AN_NOT_READ_NAME "(stack not read: --stacks)"

/* st's frames of the program's own code, from its line outwards. */
static void frames_fill(struct bld *b, const struct an_stack *st, struct gp_an_frames *out)
{
	size_t k = 0;

	for (uint32_t i = (uint32_t)st->user; i < st->n; i++)
		k += st->f[i].user;
	out->frames = arr(b, k, sizeof(*out->frames));
	out->n = 0;
	for (uint32_t i = (uint32_t)st->user; out->frames && i < st->n; i++)
		if (st->f[i].user)
			out->frames[out->n++] = frame_name(b, &st->f[i]);
}

static void line_fill(struct bld *b, const struct line_grp *g, uint64_t whole, int every_stack,
		      struct gp_an_line *e)
{
	const struct an_stack *st = g->rep;

	e->bytes = g->bytes;
	e->share = share(g->bytes, whole);
	e->count = g->count;
	e->line = -1;
	if (!st) {
		e->name = every_stack ? AN_NO_STACK_NAME : AN_NOT_READ_NAME;
		return;
	}
	e->name = frame_name(b, &st->f[st->user]);
	e->file = astr(b, st->f[st->user].file);
	e->function = astr(b, st->f[st->user].func);
	e->line = st->f[st->user].line;
	e->library_frames = (uint64_t)st->user; /* the frames inside it are a library's */
	frames_fill(b, st, &e->stack);
}

/* Bytes by the source line that made them: with --stacks, or where some of
 * them have a line (without it, the hook reads the stacks of blocks no
 * module names); not present otherwise. */
static void by_line(struct bld *b, const struct an_proc *p, struct an_rec *const *recs, size_t n,
		    uint64_t whole, struct gp_an_lines *out)
{
	struct gp_u64map by_key = { 0 };
	struct line_grp **list = NULL;
	size_t ng = 0, cap = 0, with_line = 0;

	for (size_t i = 0; !p->hook_stacks && i < n && !with_line; i++) {
		const struct an_stack *st = stack_of(p, recs[i]);

		with_line = st && st->key;
	}
	if (!p->hook_stacks && !with_line)
		return;
	out->present = 1;
	for (size_t i = 0; i < n; i++) {
		const struct an_stack *st = stack_of(p, recs[i]);
		const struct an_str *key = st ? st->key : NULL;
		struct line_grp *g = gp_u64map_get(&by_key, (uint64_t)(uintptr_t)key);

		if (!g) {
			if (ng == cap) {
				size_t c = cap ? cap * 2 : 16;
				struct line_grp **l = realloc(list, c * sizeof(*l));

				if (!l)
					goto oom;
				list = l;
				cap = c;
			}
			g = calloc(1, sizeof(*g));
			if (!g || gp_u64map_put(&by_key, (uint64_t)(uintptr_t)key, g)) {
				free(g);
				goto oom;
			}
			list[ng++] = g;
		}
		g->bytes += recs[i]->bytes;
		g->count++;
		if (key && recs[i]->bytes >= g->rep_bytes) {
			g->rep = st;
			g->rep_bytes = recs[i]->bytes;
		}
	}
	if (ng)
		qsort(list, ng, sizeof(*list), line_grp_cmp);
	out->v = arr(b, ng, sizeof(*out->v));
	for (size_t i = 0; out->v && i < ng; i++)
		line_fill(b, list[i], whole, p->hook_stacks, &out->v[i]);
	out->n = out->v ? ng : 0;
	goto done;
oom:
	b->oom = 1;
done:
	for (size_t i = 0; i < ng; i++)
		free(list[i]);
	free(list);
	gp_u64map_free(&by_key);
}

static int member_cmp(const void *x, const void *y)
{
	const struct an_member *a = x, *b = y;

	if (a->r->bytes != b->r->bytes)
		return a->r->bytes > b->r->bytes ? -1 : 1;
	if (a->r->ts != b->r->ts)
		return a->r->ts < b->r->ts ? -1 : 1;
	return a->r->addr < b->r->addr ? -1 : a->r->addr > b->r->addr;
}

static void alloc_fill(struct bld *b, const struct an_proc *p, const struct an_set *s,
		       const struct an_member *m, struct gp_an_alloc *e)
{
	const struct an_rec *r = m->r;
	const struct an_sframe *f = line_of(p, r);

	e->bytes = r->bytes;
	e->addr = r->addr;
	e->requested = opt((r->flags & R_TORCH) != 0, r->requested);
	e->line = f ? frame_name(b, f) : NULL;
	e->t = sec(b, r->ts);
	an_step_label(p, r->step, &e->step, &e->step_when);
	e->phase = s->torch ? an_phase_names[r->phase] : NULL;
	e->layer = layer_str(b, r->layer);
	e->category = s->torch ? an_cat_names[m->cat] : NULL;
	e->what = astr(b, m->label);
	e->api = astr(b, r->api);
	e->library = astr(b, r->library);
	e->op = astr(b, r->op);
	e->kind = an_kind_names[r->kind];
	e->freed_t = (r->flags & R_FREED) ? sec(b, r->free_ts) : NAN;
}

/* How much of the framework's memory in a set (the peak's number: PyTorch's
 * in the torch modes) has a module, a source line, one or both. */
static void attributed(const struct an_proc *p, const struct an_set *s, struct gp_an_set *out)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct an_rec *r = s->m[i].r;
		int layer = r->layer != NULL, line = line_of(p, r) != NULL;

		if (!an_is_fw(p, r))
			continue;
		out->attributed.bytes += r->bytes;
		out->attributed.layer += layer ? r->bytes : 0;
		out->attributed.line += line ? r->bytes : 0;
		out->attributed.either += layer || line ? r->bytes : 0;
	}
}

/* The groupings of a set, and its top allocations (s is sorted for them). */
static void describe(struct bld *b, const struct an_proc *p, struct an_set *s, int top,
		     struct gp_an_set *out)
{
	size_t ntop = s->n < (size_t)top ? s->n : (size_t)top;
	struct an_rec **recs = s->n ? malloc(s->n * sizeof(*recs)) : NULL;

	out->live_bytes = s->bytes;
	out->live_allocations = s->n;
	attributed(p, s, out);
	if (s->n && !recs)
		b->oom = 1;
	for (size_t i = 0; recs && i < s->n; i++)
		recs[i] = s->m[i].r;
	by_line(b, p, recs, recs ? s->n : 0, s->bytes, &out->by_line);
	free(recs);
	if (s->torch)
		by_category(b, s, out);
	by_layer(b, s, &out->layers, &out->nlayers);
	if (s->torch)
		by_key(b, s, BY_PHASE, &out->by_phase);
	by_key(b, s, BY_OP, &out->by_op);
	by_key(b, s, BY_API, &out->by_api);
	if (s->n)
		qsort(s->m, s->n, sizeof(*s->m), member_cmp);
	out->top = arr(b, ntop, sizeof(*out->top));
	for (size_t i = 0; out->top && i < ntop; i++)
		alloc_fill(b, p, s, &s->m[i], &out->top[i]);
	out->ntop = out->top ? ntop : 0;
}

/* The set of snapshot snap of pd; *s empty and b->oom set when out of memory. */
static void snap_set(struct bld *b, struct an_pd *pd, const struct an_snap *snap, struct an_set *s)
{
	struct an_rec **recs;
	size_t n;
	int oom;

	memset(s, 0, sizeof(*s));
	recs = an_snap_members(pd, snap, &n, &oom);
	if (oom || an_set_make(b->a, pd->proc, recs, n, s))
		b->oom = 1;
	free(recs);
}

/* ---- per trace ---- */

/* a growing list of notes, copied into the arena at the end */
struct notes {
	char **s;
	size_t n, cap;
	int oom;
};

static void note(struct notes *l, const char *line)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **s = realloc(l->s, cap * sizeof(*s));

		if (!s) {
			l->oom = 1;
			return;
		}
		l->s = s;
		l->cap = cap;
	}
	if (!(l->s[l->n] = strdup(line)))
		l->oom = 1;
	else
		l->n++;
}

static void history_notes(struct bld *b, const struct an_proc *p, struct notes *notes)
{
	const struct an_history *h = &p->src->hist;
	char line[512];

	if (p->history_asked && !h->devices && !p->src->hist_marks) {
		note(notes, "--torch-history was asked, but the trace holds no "
		     "gpuprof:torch.history marks (PyTorch writes its history at exit: "
		     "did the program exit normally?): allocated is sampled");
		return;
	}
	for (int d = 0; d < AN_MAX_DEVICES; d++) {
		uint64_t bit = 1ull << d;

		if (!(h->devices & bit))
			continue;
		if (!(h->complete & bit)) {
			snprintf(line, sizeof(line),
				 "PyTorch's allocator history of device %d begins at %.3f s, not with the "
				 "program (its ring, %s, dropped the oldest "
				 "entries, or it began after the program had allocated: CUDA started "
				 "before gpuprof's hooks were loaded): allocated before that is sampled", d,
				 (double)(p->src->ts_base_ns + h->first_ts[d] - b->a->origin) / 1e9,
				 GP_ENV_TORCH_HISTORY_ENTRIES);
			note(notes, line);
		}
		if (h->gaps & bit) {
			snprintf(line, sizeof(line),
				 "parts of PyTorch's allocator history of device %d are missing (marks "
				 "lost): what happened in them is not seen", d);
			note(notes, line);
		}
		if (!(h->ended & bit)) {
			snprintf(line, sizeof(line),
				 "PyTorch's allocator history of device %d ends early (its last part is "
				 "missing)", d);
			note(notes, line);
		}
	}
}

/* Native mode: what gpuprof's hook on PyTorch's allocator did not see. */
static void hook_notes(const struct an_proc *p, struct notes *notes)
{
	char line[640];
	uint64_t alloc = 0, res = 0;

	if (p->mode != MODE_NATIVE)
		return;
	if (!p->blocks) {
		/* said where the hooks tried it (a trace of an older gpuprof
		 * says nothing of the hook) */
		if (p->hook_state && strcmp(p->hook_state->s, "on")) {
			snprintf(line, sizeof(line),
				 "gpuprof's hook on PyTorch's caching allocator was not attached (%s): "
				 "its segments are in the trace, not every tensor, and allocated is "
				 "sampled", p->hook_state->s);
			note(notes, line);
		}
		return;
	}
	for (int d = 0; d < AN_MAX_DEVICES; d++) {
		if (!p->pd[d])
			continue;
		alloc += p->pd[d]->attach_allocated;
		res += p->pd[d]->attach_reserved;
	}
	if (alloc || res) {
		char x[32], y[32];

		an_fmt_bytes(x, sizeof(x), alloc);
		an_fmt_bytes(y, sizeof(y), res);
		snprintf(line, sizeof(line),
			 "PyTorch had allocated %s (reserved %s) before gpuprof's hook began to "
			 "watch its allocator: not in these numbers", x, y);
		note(notes, line);
	}
	if (p->src->torch_guessed) {
		snprintf(line, sizeof(line),
			 "%" PRIu64 " blocks' sizes could not be read from PyTorch's counters: their "
			 "requests rounded are counted, which may be less", p->src->torch_guessed);
		note(notes, line);
	}
}

/* A flight recorder's dump written while the program went on (its end
 * says nothing of how the program ended) */
static int going_on_dump(const struct an_source *src)
{
	return src->dump_reason && strcmp(src->dump_reason->s, "end") != 0;
}

static void trace_notes(struct bld *b, const struct an_proc *p, struct notes *notes)
{
	const struct an_source *src = p->src;
	char line[512];

	if (p->no_torch)
		note(notes, "PyTorch was not in this process (it never imported torch): its memory "
		     "is shown as a CUDA program's, by the API that made it");

	if (src->cut_short) {
		snprintf(line, sizeof(line),
			 "the trace was cut short (%s): what it holds up to %.3f s is analyzed",
			 gp_tr_state(src->in)->gzip_cut ? "its gzip stream ends early" :
			 gp_tr_state(src->in)->gzip_damaged ? "its gzip data is damaged" : "no gpuprof.end",
			 src->last_ts == INT64_MIN ? 0.0 :
			 (double)(src->ts_base_ns + src->last_ts - b->a->origin) / 1e9);
		note(notes, line);
	} else if (src->end_recovered) {
		note(notes, "the program was killed: `gpuprof recover` kept what the trace held "
		     "up to its last flush");
	} else if (src->have_end && src->end_signal) {
		char sig[40];

		snprintf(line, sizeof(line),
			 "the program was ended by %s: the recorder finished the trace as "
			 "it ended, so it holds everything up to that moment",
			 gp_an_signal_text(src->end_signal, sig, sizeof(sig)));
		note(notes, line);
	} else if (going_on_dump(src)) {
		if (!strcmp(src->dump_reason->s, "cap"))
			note(notes, "the start of the run, up to the trace's size cap (--trace-cap): the "
			     "trace of the same name without .dump0 goes on with the outline of the whole "
			     "run and its last window in full");
		else {
			snprintf(line, sizeof(line),
				 "a flight recorder's dump (%s) of a program that went on: the run up to it",
				 src->dump_reason->s);
			note(notes, line);
		}
	} else if (src->have_end && !src->end_clean) {
		note(notes, "the program did not exit normally (gpuprof.end says clean: false)");
	}
	if (src->has_cap) {
		char cap[32];

		an_fmt_bytes(cap, sizeof(cap), src->cap_bytes);
		snprintf(line, sizeof(line),
			 "the trace reached its size cap (%s) at %.3f s: the run up to then is in full in "
			 "%s; from then on this trace holds the outline of every step and the last window",
			 cap, (double)(src->cap_ts - b->a->origin) / 1e9, src->cap_start->s);
		note(notes, line);
	}
	if (src->recover_lines_skipped || src->recover_gzip_gaps) {
		char bytes[32];

		an_fmt_bytes(bytes, sizeof(bytes), src->recover_bytes_skipped);
		snprintf(line, sizeof(line),
			 "the trace was damaged: `gpuprof recover` passed over %" PRIu64 " line%s (%s)"
			 "%s%s after its event %" PRIu64 "; what they held is missing from this "
			 "analysis",
			 src->recover_lines_skipped, src->recover_lines_skipped == 1 ? "" : "s", bytes,
			 src->recover_gzip_gaps ? " and compressed data that did not decode" : "",
			 src->recover_gzip_gaps ? " up to the next flush," : ",",
			 src->recover_damage_after);
		note(notes, line);
	}
	if (src->dropped_cupti || src->dropped_host || src->dropped_marks) {
		snprintf(line, sizeof(line), "the recorder lost %" PRIu64 " records: numbers may be low",
			 src->dropped_cupti + src->dropped_host + src->dropped_marks);
		note(notes, line);
	}
	if (src->ro.late) {
		snprintf(line, sizeof(line),
			 "%" PRIu64 " events arrived after their time window had been analyzed "
			 "(out of order by more than the recorder promised); they were counted late",
			 src->ro.late);
		note(notes, line);
	}
	if (p->unattributed && p->mode != MODE_CUDA) {
		snprintf(line, sizeof(line),
			 "%" PRIu64 " allocations have no CUDA API call in the trace: no thread, "
			 "so no layer (unattributed)", p->unattributed);
		note(notes, line);
	}
	if (p->summarised) {
		snprintf(line, sizeof(line),
			 "over %" PRIu64 " live allocations: %" PRIu64 " allocations made past that "
			 "summarised (memory bounded): in every total and peak, not in the peak's "
			 "breakdown by layer, category and line, nor among the largest",
			 an_max_live_records(), p->summarised);
		note(notes, line);
	}
	if (p->unmatched_frees) {
		snprintf(line, sizeof(line),
			 "%" PRIu64 " frees of memory allocated before the trace or in a gap of it",
			 p->unmatched_frees);
		note(notes, line);
	}
	if (p->profiler_windows) {
		snprintf(line, sizeof(line),
			 "torch.profiler ran %u time(s) inside the trace: its allocations went to it, "
			 "not to gpuprof", p->profiler_windows);
		note(notes, line);
	}
	if (src->statics == STATICS_NONE) {
		snprintf(line, sizeof(line), "module globals (__device__ variables, device_static) "
			 "were not recorded (%s without statics)", GP_ENV_RECORD);
		note(notes, line);
	}
	if (an_native_segments(p) && !p->named_segs.count)
		note(notes, "PyTorch did not name its segments (it did not exit normally?): "
		     "reserved includes device memory of other libraries");
	hook_notes(p, notes);
	history_notes(b, p, notes);
}

static void trace_fill(struct bld *b, const struct an_proc *p, struct gp_an_trace *t)
{
	const struct an_source *src = p->src;
	const struct an_history *h = &src->hist;
	struct notes notes = { 0 };

	t->path = str(b, src->path);
	t->pid = src->pid;
	t->cmdline = astr(b, src->cmdline);
	t->hostname = astr(b, src->hostname);
	t->mode = (enum gp_an_mode)src->mode;
	if (p->torch_version || p->alloc_conf || p->backend) {
		t->has_torch = 1;
		t->torch_version = astr(b, p->torch_version);
		t->torch_alloc_conf = astr(b, p->alloc_conf);
		t->torch_backend = astr(b, p->backend);
	}
	t->start_unix_ns = (int64_t)src->start_unix_ns;
	t->rank = src->rank >= 0 ? src->rank : -1;
	t->world_size = src->world_size;
	t->local_rank = src->local_rank;
	t->local_world_size = src->local_world_size;
	t->job_start_unix_ns = src->job_start_unix_ns ? (int64_t)src->job_start_unix_ns : -1;
	t->complete = !src->cut_short && !src->end_recovered;
	t->cut_short = src->cut_short != 0;
	t->recovered = src->end_recovered != 0;
	t->clean_exit = src->have_end && !src->end_recovered && !going_on_dump(src) ? src->end_clean != 0 : -1;
	t->end_signal = src->end_signal;
	t->end_t = src->end_ts != INT64_MIN ? sec(b, src->ts_base_ns + src->end_ts)
		   : src->last_ts != INT64_MIN ? sec(b, src->ts_base_ns + src->last_ts) : NAN;
	t->events = src->events;
	t->late_events = src->ro.late;
	t->window_overflows = src->ro.overflow;
	t->max_events_held = src->ro.max_n;
	t->watermarks = src->ro.n_wm > 0;
	t->dropped_cupti = src->dropped_cupti;
	t->dropped_host = src->dropped_host;
	t->dropped_marked = src->dropped_marks;
	t->late_memory_records = src->late_records;
	t->unmatched_frees = p->unmatched_frees;
	t->reused_addresses = p->reused_live;
	t->unattributed_allocations = p->unattributed;
	t->profiler_windows = p->profiler_windows;
	if (p->mode == MODE_NATIVE) {
		t->has_hook = 1;
		t->hook.attached = p->blocks;
		t->hook.stacks = p->hook_stacks;
		t->hook.why = !p->blocks && p->hook_state && strcmp(p->hook_state->s, "on")
				      ? astr(b, p->hook_state) : NULL;
		t->hook.sizes_guessed = src->torch_guessed;
		for (int d = 0; d < AN_MAX_DEVICES; d++) {
			if (!p->pd[d])
				continue;
			t->hook.allocated_before += p->pd[d]->attach_allocated;
			t->hook.reserved_before += p->pd[d]->attach_reserved;
		}
	}
	if (h->devices) {
		t->has_torch_history = 1;
		t->history_points = h->n;
		t->history_marks = src->hist_marks;
		t->history_complete = (h->complete & h->devices) == h->devices && !h->gaps &&
				      (h->ended & h->devices) == h->devices;
	}
	trace_notes(b, p, &notes);
	if (notes.oom)
		b->oom = 1;
	t->notes = arr(b, notes.n, sizeof(*t->notes));
	for (size_t i = 0; t->notes && i < notes.n; i++)
		t->notes[i] = str(b, notes.s[i]);
	t->nnotes = t->notes ? notes.n : 0;
	for (size_t i = 0; i < notes.n; i++)
		free(notes.s[i]);
	free(notes.s);
}

/* ---- per process and device ---- */

static void moment_fill(struct bld *b, const struct an_proc *p, const struct an_frag_moment *m,
			struct gp_an_moment *out)
{
	out->gap = an_frag_gap(m);
	out->reserved = m->res;
	out->allocated = m->alloc;
	out->t = sec(b, m->ts);
	an_step_label(p, m->step, &out->step, &out->step_when);
	out->phase = phase_name(p, m->phase);
}

/* An amount of device memory counted from allocations (or segments, or pools). */
static void amount(struct bld *b, struct gp_an_amount *x, int known, uint64_t end, uint64_t peak,
		   int64_t peak_ts, int peak_t_known, const char *source)
{
	x->known = known != 0;
	x->end = opt(known, end);
	x->peak = opt(known, peak);
	x->peak_t = peak_t_known ? sec(b, peak_ts) : NAN;
	x->source = source;
}

/* The cache's fragmentation: only PyTorch's own blocks and segments show
 * what its pools held free when it reserved more (memory.c, split_note). */
static void split_fill(struct bld *b, const struct an_pd *pd, struct gp_an_split *o)
{
	const struct an_proc *p = pd->proc;
	const struct an_split *sp = &pd->split;

	/* said in PyTorch's settings, or seen: pages mapped (the program may
	 * set it itself, after the hooks read the settings) */
	o->expandable = p->expandable_segments || pd->seg_mapped;
	if (!an_native_blocks(p)) {
		o->why = "only PyTorch's own blocks and segments show it (native mode with "
			 "gpuprof's allocator hook)";
		return;
	}
	o->known = 1;
	o->segments = sp->segments;
	o->bytes = sp->bytes;
	o->has_worst = sp->segments != 0;
	if (!o->has_worst)
		return;
	o->worst.t = sec(b, sp->worst.ts);
	an_step_label(p, sp->worst.step, &o->worst.step, &o->worst.step_when);
	o->worst.phase = phase_name(p, sp->worst.phase);
	o->worst.cached = sp->worst.cached;
	o->worst.block = sp->worst.block;
	o->worst.segment = sp->worst.segment;
	o->worst.reserved = sp->worst.res;
	o->worst.allocated = sp->worst.alloc;
}

static void summary_fill(struct bld *b, const struct an_pd *pd, struct gp_an_summary *s)
{
	const struct an_proc *p = pd->proc;
	int native = an_native_segments(p), blocks = an_native_blocks(p);
	size_t nk = 0;

	if (native) {
		amount(b, &s->allocated, pd->has_torch_mem, pd->torch_allocated, pd->torch_allocated_peak,
		       pd->torch_allocated_peak_ts, pd->torch_hist && pd->torch_allocated_peak,
		       pd->torch_hist ? "torch history" : pd->has_torch_mem ? "torch marks" : NULL);
		amount(b, &s->reserved, 1, pd->fw_live, pd->fw_peak, pd->fw_peak_ts, pd->fw_peak != 0,
		       "segments");
	} else {
		/* every tensor: PyTorch's blocks inside its segments (native), or
		 * its allocations inside cudaMallocAsync's pools (tensor) */
		amount(b, &s->allocated, 1, pd->fw_live, pd->fw_peak, pd->fw_peak_ts, pd->fw_peak != 0,
		       blocks ? "blocks" : "allocations");
		amount(b, &s->reserved, pd->has_pool, pd->pool_sum, pd->pool_peak, pd->pool_peak_ts,
		       pd->has_pool && pd->pool_peak, !pd->has_pool ? NULL : blocks ? "segments" : "pools");
	}
	s->total_end = an_pd_device_live(pd);
	s->total_peak = pd->total_peak;
	s->total_peak_t = pd->total_peak ? sec(b, pd->total_peak_ts) : NAN;
	if (p->mode != MODE_CUDA) {
		s->has_other = 1;
		s->other_end = pd->other_live;
		s->other_peak = pd->other_peak;
		s->other_allocations = pd->other_allocs;
	}
	s->allocations = pd->fw_allocs;
	s->frees = pd->frees;
	s->live_allocations_end = pd->live_count; /* kept or summarised */
	s->max_live_allocations = pd->max_live_count;
	for (int k = K_DEVICE_STATIC; k < K_N; k++)
		nk += pd->kind_allocs[k] != 0;
	s->kinds = arr(b, nk, sizeof(*s->kinds));
	for (int k = K_DEVICE_STATIC; s->kinds && k < K_N; k++) {
		struct gp_an_kind_use *e;

		if (!pd->kind_allocs[k])
			continue;
		e = &s->kinds[s->nkinds++];
		e->kind = an_kind_names[k];
		e->end = pd->kind_live[k];
		e->peak = pd->kind_peak[k];
		e->allocations = pd->kind_allocs[k];
	}
	s->frag.known = pd->frag_known != 0;
	s->frag.source = !pd->frag_known ? NULL : blocks ? "segments" : !native ? "pools"
			 : pd->torch_hist ? "torch history" : "torch marks";
	if (!pd->frag_known) {
		s->frag.why = native ? "in native mode the bytes allocated inside PyTorch's "
				       "segments are not known from CUDA alone"
				     : "no stream-ordered pool in this trace";
	} else {
		uint64_t res = native ? pd->torch_reserved : pd->pool_sum;
		uint64_t al = native ? pd->torch_allocated : pd->fw_live;

		s->frag.has_worst = an_frag_gap(&pd->frag_worst) != 0;
		if (s->frag.has_worst)
			moment_fill(b, p, &pd->frag_worst, &s->frag.worst);
		s->frag.has_at_peak = pd->frag_peak.res != 0;
		if (s->frag.has_at_peak)
			moment_fill(b, p, &pd->frag_peak, &s->frag.at_peak);
		s->frag.end = opt(1, res > al ? res - al : 0);
	}
	split_fill(b, pd, &s->split);
}

/* "AllGather" of "ncclDevKernel_AllGather_RING_LL": the name less NCCL's
 * prefixes, up to its algorithm and types. */
static const char *coll_op(struct bld *b, const char *kernel)
{
	static const char *const prefixes[] = { "ncclDevKernel_", "ncclKernel_", GP_TR_COLL_PREFIX };
	const char *p = kernel, *end;

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(p, prefixes[i], strlen(prefixes[i])) == 0) {
			p += strlen(prefixes[i]);
			break;
		}
	end = strchr(p, '_');
	if (!end)
		end = p + strlen(p);
	if (end == p)
		return str(b, kernel);
	p = gp_an_strndup(b->r, p, (size_t)(end - p));
	if (!p)
		b->oom = 1;
	return p;
}

static void coll_one(struct bld *b, const struct an_coll *c, struct gp_an_collective *o)
{
	o->kernel = astr(b, c->kernel);
	/* NCCL's name of the call ("ncclAllGather"), else the kernel's */
	o->call = astr(b, c->call);
	if (c->call)
		o->op = str(b, c->call->s + sizeof(GP_TR_COLL_PREFIX) - 1);
	else
		o->op = o->kernel ? coll_op(b, o->kernel) : NULL;
	o->launch_t = c->launch_known ? sec(b, c->launch) : NAN;
	o->start_t = sec(b, c->start);
	o->end_t = sec(b, c->end);
	o->stream = c->stream;
	o->tid = c->launch_known ? c->tid : -1;
}

static void coll_fill(struct bld *b, const struct an_pd *pd, const struct an_coll_moment *m,
		      struct gp_an_collectives *o)
{
	o->present = pd->coll.count != 0 && m->set;
	if (!o->present)
		return;
	o->seen = pd->coll.count;
	o->during = arr(b, m->n, sizeof(*o->during));
	for (size_t i = 0; o->during && i < m->n; i++)
		coll_one(b, &m->during[i], &o->during[i]);
	o->nduring = o->during ? m->n : 0;
	o->more = m->more;
	o->has_before = m->has_before;
	if (m->has_before)
		coll_one(b, &m->before, &o->before);
	o->has_after = m->has_after;
	if (m->has_after)
		coll_one(b, &m->after, &o->after);
}

static void peak_fill(struct bld *b, struct an_pd *pd, int top, struct gp_an_peak *o,
		      struct an_kept *kept)
{
	struct an_proc *p = pd->proc;
	struct an_set s = { 0 };

	o->what = an_native_segments(p) ? "reserved" : an_every_tensor(p) ? "allocated" : "device";
	o->bytes = pd->fw_peak;
	o->t = sec(b, pd->peak_ts);
	an_step_label(p, pd->peak_step, &o->step, &o->step_when);
	o->phase = phase_name(p, pd->peak_phase);
	o->layer = layer_str(b, pd->peak_layer);
	o->other = pd->peak_other;
	o->device_total = pd->peak_device;
	o->device_static = pd->peak_static;
	o->reserved = opt(pd->peak_reserved_known, pd->peak_reserved);
	coll_fill(b, pd, &pd->peak_coll, &o->collectives);
	snap_set(b, pd, &pd->peak, &s);
	describe(b, p, &s, top, &o->set);
	an_kept_of(&s, kept);
	an_set_free(b->a, &s);
}

static void steps_fill(struct bld *b, const struct an_pd *pd, struct gp_an_device *d)
{
	d->steps.count = pd->marks_seen;
	d->steps.stride = pd->stride;
	d->steps.begin_t = pd->proc->has_steps && pd->proc->step1_known ? sec(b, pd->proc->step1_ts) : NAN;
	d->steps.unfinished = pd->proc->has_steps && pd->proc->step_began;
	d->steps.series = arr(b, pd->nseries, sizeof(*d->steps.series));
	for (size_t i = 0; d->steps.series && i < pd->nseries; i++) {
		const struct an_step_pt *s = &pd->series[i];
		struct gp_an_step_point *e = &d->steps.series[i];

		e->step = s->step;
		e->t = sec(b, s->ts);
		e->live = s->fw;
		e->peak = s->peak;
		e->reserved = opt(s->reserved_known, s->reserved);
		e->total = s->total;
	}
	d->steps.nseries = d->steps.series ? pd->nseries : 0;
}

/* Who holds what survives a leak: allocations made after the warm-up, at
 * least one full step before the last boundary, still live there. */
static void survivors_fill(struct bld *b, struct an_pd *pd, const struct an_leak *lk,
			   struct gp_an_leak *out)
{
	struct an_proc *p = pd->proc;
	struct an_rec **recs;
	size_t n, k = 0;
	int oom;
	uint32_t lo = lk->since_step + 1, hi = pd->step_snap_step;
	struct an_set s = { 0 };

	if (hi > lo)
		hi--;
	recs = an_snap_members(pd, &pd->step_snap, &n, &oom);
	for (size_t i = 0; i < n; i++) {
		struct an_rec *r = recs[i];

		if (an_is_fw(p, r) && r->step >= lo && r->step <= hi)
			recs[k++] = r;
	}
	if (oom || an_set_make(b->a, p, recs, k, &s)) {
		b->oom = 1;
	} else {
		struct gp_an_survivors *sv = &out->survivors;
		uint32_t steps = hi - lo + 1;

		out->has_survivors = 1;
		sv->from_step = lo;
		sv->to_step = hi;
		sv->bytes = s.bytes;
		sv->per_step = gp_an_round((double)s.bytes / steps, 1);
		sv->allocations = s.n;
		by_layer(b, &s, &sv->layers, &sv->nlayers);
		if (s.torch)
			by_key(b, &s, BY_PHASE, &sv->by_phase);
		by_key(b, &s, BY_OP, &sv->by_op);
		by_line(b, p, recs, k, s.bytes, &sv->by_line);
	}
	an_set_free(b->a, &s);
	free(recs);
}

static void leak_fill(struct bld *b, struct an_pd *pd, uint64_t capacity, struct an_leak *lk,
		      struct gp_an_leak *o)
{
	an_leak_fit(pd, capacity, lk);
	o->verdict = (enum gp_an_leak_verdict)lk->verdict;
	o->warmup_steps = AN_LEAK_WARMUP;
	o->rate_per_step = o->rate_per_second = o->r2 = o->steps_until_full = NAN;
	if (lk->verdict == LEAK_NO_STEPS) {
		o->why = pd->proc->mode == MODE_CUDA ? "the trace has no step:N marks (the PyTorch "
						       "hooks make them)" : "no optimizer step was marked";
		return;
	}
	o->points = lk->n;
	if (lk->verdict == LEAK_TOO_FEW)
		return;
	o->since_step = lk->since_step;
	o->last_step = lk->last_step;
	o->rate_per_step = gp_an_round(lk->slope, 1);
	o->rate_per_second = lk->per_second > 0 ? gp_an_round(lk->per_second, 1) : NAN;
	o->r2 = gp_an_round(lk->r2, 4);
	o->grew = lk->grew;
	o->shrank = lk->shrank;
	o->flat = lk->flat;
	o->live_first = lk->live_first;
	o->live_last = lk->live_last;
	o->steps_until_full = lk->verdict == LEAK_FOUND && lk->steps_to_full >= 0
				      ? gp_an_round(lk->steps_to_full, 0) : NAN;
	if (lk->verdict == LEAK_FOUND)
		survivors_fill(b, pd, lk, o);
	if (o->verdict == GP_AN_LEAK_FOUND && o->has_survivors && !o->survivors.bytes) {
		/* live memory at the step ends grew, yet nothing a step made was
		 * left for the next: each step holds more (a larger batch, a
		 * longer sequence), which is growth, not a leak (CATEGORIES.md) */
		o->verdict = GP_AN_LEAK_NONE;
		lk->verdict = LEAK_NONE; /* the failures' advice reads it */
		o->has_survivors = 0;
		o->steps_until_full = NAN;
		o->why = "live memory at the step marks grew, but nothing made in one step was still "
			 "live at a later step's end: each step holds more, it leaves nothing behind";
	}
}

static void growth_fill(const struct an_pd *pd, struct gp_an_growth *o)
{
	struct an_growth g;
	const struct an_step_pt *s = pd->series;

	an_growth_fit(pd, &g);
	if (!g.found)
		return;
	o->present = 1;
	o->since_step = s[g.first].step;
	o->last_step = s[g.last].step;
	o->first_peak = s[g.first].peak;
	o->last_peak = s[g.last].peak;
	o->last_increase = g.last_increase;
	o->live_first = s[g.first].fw;
	o->live_last = s[g.last].fw;
	o->factor_per_step = gp_an_round(g.factor_per_step, 4);
	o->bytes_per_step = gp_an_round(g.bytes_per_step, 1);
	o->next_peak = opt(g.next_peak < 1.8e19, (uint64_t)g.next_peak);
}

static enum gp_an_oom_outcome oom_outcome(const struct an_proc *p, const struct an_oom *o)
{
	if (o->recovered)
		return GP_AN_OOM_RETRIED;
	if (o->went_on)
		return GP_AN_OOM_CAUGHT;
	return an_oom_fatal(p, o) ? GP_AN_OOM_FATAL : GP_AN_OOM_LATER_STEPS;
}

/* Every failure of pd by outcome, the listed ones and those left out, and
 * the line of those got past inside a library. */
static void oom_outcomes_fill(struct an_pd *pd, struct gp_an_device *d)
{
	uint64_t past_ns = pd->oom_out.past_ns, out_fatal = an_oom_out_fatal(pd);

	d->has_oom_outcomes = 1;
	d->oom_outcomes[GP_AN_OOM_FATAL] = out_fatal;
	d->oom_outcomes[GP_AN_OOM_LATER_STEPS] = pd->oom_out.stopped - out_fatal;
	d->oom_outcomes[GP_AN_OOM_CAUGHT] = pd->oom_out.went_on;
	d->oom_outcomes[GP_AN_OOM_RETRIED] = pd->oom_out.recovered;
	d->ooms_got_past.bytes = pd->oom_out.past_bytes;
	for (size_t i = 0; i < pd->nooms; i++) {
		const struct an_oom *o = &pd->ooms[i];
		enum gp_an_oom_outcome k = oom_outcome(pd->proc, o);

		d->oom_outcomes[k]++;
		if (k == GP_AN_OOM_CAUGHT || k == GP_AN_OOM_RETRIED) {
			d->ooms_got_past.bytes += o->request;
			past_ns += o->past_ts > o->ts ? (uint64_t)(o->past_ts - o->ts) : 0;
		}
	}
	d->ooms_got_past.count = d->oom_outcomes[GP_AN_OOM_CAUGHT] + d->oom_outcomes[GP_AN_OOM_RETRIED];
	d->ooms_got_past.seconds = gp_an_round((double)past_ns / 1e9, 6);
}

static void segments_fill(struct bld *b, const struct an_set *s, const struct gp_an_set *cats,
			  const struct an_seg *segs, size_t nsegs, size_t *budget, struct gp_an_segment **out,
			  size_t *nout);

static void oom_fill(struct bld *b, struct an_pd *pd, struct an_oom *o, int detailed,
		     uint64_t capacity, const struct an_leak *lk, int top, struct gp_an_oom *j)
{
	struct an_proc *p = pd->proc;
	struct an_set s = { 0 };
	struct an_oom_moment m;

	j->outcome = oom_outcome(p, o);
	j->fatal = j->outcome == GP_AN_OOM_FATAL;
	j->past_after = o->past_ts > o->ts ? gp_an_round((double)(o->past_ts - o->ts) / 1e9, 6) : NAN;
	j->t = sec(b, o->ts);
	an_step_label(p, o->step, &j->step, &j->step_when);
	j->phase = phase_name(p, o->phase);
	j->layer = layer_str(b, o->layer);
	j->op = astr(b, o->op);
	j->api = astr(b, o->api);
	j->tid = o->tid;
	j->request = o->request;
	an_oom_moment(o, &m);
	j->free = opt(m.has_free, m.free);
	j->total = opt(o->has_meminfo, o->total);
	j->result = o->result;
	j->allocated = o->fw_live;
	j->other = o->other_live;
	j->device_total = m.device;
	j->device_static = o->static_live;
	j->reserved = opt(m.has_reserved, m.reserved);
	j->outside_trace = opt(m.has_outside, m.outside);
	j->retries = o->retries;
	j->released_after = o->released;
	j->recovered = o->recovered != 0;
	j->raised = o->torch;
	if (o->torch) {
		j->pytorch.block = o->torch_block;
		j->pytorch.allocated = o->torch_allocated;
		j->pytorch.reserved = o->torch_reserved;
		j->pytorch.free = o->torch_free;
	}
	coll_fill(b, pd, &o->coll, &j->collectives);
	j->detailed = detailed;
	if (detailed) {
		snap_set(b, pd, &o->snap, &s);
		describe(b, p, &s, top, &j->set);
		if (o->nsegs) {
			size_t budget = SIZE_MAX;

			segments_fill(b, &s, &j->set, o->segs, o->nsegs, &budget, &j->segments, &j->nsegments);
			j->has_segments = 1;
		}
	}
	if (an_advise(b->r, pd, o, &s, capacity, lk, &j->advice, &j->nadvice))
		b->oom = 1;
	an_set_free(b->a, &s);
}

/* The timeline's buckets, copied into the result. */
static void timeline_fill(struct bld *b, struct an_pd *pd, struct gp_an_timeline *o)
{
	const struct an_timeline *tl = &pd->tl;
	size_t n;
	uint8_t phase = 0;

	/* to the end of the trace: a failure or a phase may come after the
	 * last change of memory */
	if (pd->proc->src->last_ts != INT64_MIN)
		an_memory_timeline_end(pd, pd->proc->src->ts_base_ns + pd->proc->src->last_ts);
	n = tl->n;
	if (!pd->has_tl || !tl->started || n == 0)
		return;
	o->t0 = sec(b, tl->t0);
	o->dt = (double)tl->width / 1e9;
	o->n = n;
	for (int s = 0; s < GP_AN_TL_N; s++) {
		if (tl->first[s] >= n)
			continue;
		o->min[s] = arr(b, n, sizeof(uint64_t));
		o->max[s] = arr(b, n, sizeof(uint64_t));
		if (!o->min[s] || !o->max[s])
			return;
		memcpy(o->min[s], tl->lo[s], n * sizeof(uint64_t));
		memcpy(o->max[s], tl->hi[s], n * sizeof(uint64_t));
		o->first[s] = tl->first[s];
	}
	o->phase = arr(b, n, 1);
	if (!o->phase)
		return;
	for (size_t i = 0; i < n; i++)
		o->phase[i] = phase = an_tl_bucket_phase(tl, (uint32_t)i, phase);
	/* cuda mode has no phases: every bucket is "none" */
	o->phases = an_phase_names;
	o->nphases = pd->proc->mode == MODE_CUDA ? 1 : PH_N;
	o->present = 1;
}

static struct gp_an_holder *holders_fill(struct bld *b, const struct an_outline_holder *h, size_t n,
					  uint64_t peak)
{
	struct gp_an_holder *o = arr(b, n, sizeof(*o));

	for (size_t i = 0; o && i < n; i++) {
		o[i].name = astr(b, h[i].name);
		o[i].bytes = h[i].bytes;
		o[i].share = share(h[i].bytes, peak);
	}
	return o;
}

/* The flight recorder's outline of the run: its step series replaces the
 * one the window's marks made (an_memory_use_outline). */
static void outline_fill(struct bld *b, struct an_pd *pd, struct gp_an_outline *o)
{
	const struct an_source *src = pd->proc->src;
	const struct an_outline_dev *od = src->outline.dev[pd->device];

	o->window_t = src->has_window ? sec(b, src->window_ts) : NAN;
	o->dump = astr(b, src->dump_reason);
	if (!od)
		return;
	an_memory_use_outline(pd, od);
	o->present = 1;
	o->records = od->records;
	o->steps = od->steps;
	o->first_step = od->steps ? (int64_t)od->first_step : -1;
	o->last_step = od->steps ? (int64_t)od->last_step : -1;
	o->begin_t = sec(b, od->begin_ns);
	o->end_t = sec(b, od->end_ns);
	o->allocated_peak = od->allocated_peak;
	o->peak_step = (int64_t)od->peak_step;
	o->peak_t = sec(b, od->peak_ns);
	o->reserved_peak = od->reserved_peak;
	o->device_peak = od->device_peak;
	o->ooms = od->ooms;
	o->oom_bytes = od->oom_bytes;
	o->first_oom_step = od->ooms ? (int64_t)od->first_oom_step : -1;
	o->first_oom_t = od->ooms ? sec(b, od->first_oom_ns) : NAN;
	o->dropped_segments = od->dropped_segments;
	o->dropped_bytes = od->dropped_bytes;
	o->by_category = holders_fill(b, od->cat, od->ncat, od->allocated_peak);
	o->ncategory = o->by_category ? od->ncat : 0;
	o->by_layer = holders_fill(b, od->layer, od->nlayer, od->allocated_peak);
	o->nlayer = o->by_layer ? od->nlayer : 0;
}

/* ---- what was live at a moment (moments.h, --at) ---- */

/* groups a breakdown lists, then "(the rest)" */
#define BREAKDOWN_ROWS 8
/* allocations a breakdown names as its largest (the report's bands), at
 * most, and the least of them against what was alive (smaller ones are
 * under a pixel of the picture: one grey band) */
#define BREAKDOWN_BANDS 32
#define BREAKDOWN_BAND_SHARE 512
#define REST_NAME "(the rest)"
#define NO_LINE_NAME "(no source line)"

/* The allocations the breakdowns name as their largest, each once, and
 * their Python stacks. */
struct bands {
	struct gp_u64map index; /* record address -> its index + 1 */
	struct gp_an_alloc *v;
	struct gp_an_frames *stacks;
	size_t n, cap;
	int has_stacks;
};

/* g's largest BREAKDOWN_ROWS groups and the rest, into the arena. layers:
 * the names are layer paths. */
static void holders_of(struct bld *b, struct an_grpset *g, uint64_t whole, int layers,
		       struct gp_an_holder **out, size_t *nout)
{
	size_t n = g->n > BREAKDOWN_ROWS ? BREAKDOWN_ROWS + 1 : g->n;
	struct gp_an_holder *v;
	uint64_t rest = 0;

	if (g->oom)
		b->oom = 1;
	an_grp_sort(g);
	v = arr(b, n, sizeof(*v));
	*out = v;
	*nout = v ? n : 0;
	for (size_t i = 0; v && i < g->n; i++) {
		if (i >= BREAKDOWN_ROWS) {
			rest += g->list[i]->bytes;
			continue;
		}
		v[i].name = layers ? layer_text(b, g->list[i]->name) : str(b, g->list[i]->name);
		v[i].bytes = g->list[i]->bytes;
		v[i].share = share(g->list[i]->bytes, whole);
	}
	if (v && g->n > BREAKDOWN_ROWS) {
		v[BREAKDOWN_ROWS].name = REST_NAME;
		v[BREAKDOWN_ROWS].bytes = rest;
		v[BREAKDOWN_ROWS].share = share(rest, whole);
	}
}

/* The index in bands of m's allocation, added where new; SIZE_MAX when
 * out of memory. */
static size_t band_of(struct bld *b, const struct an_proc *p, const struct an_set *s, const struct an_member *m,
		      struct bands *bands)
{
	uint64_t key = (uint64_t)(uintptr_t)m->r;
	uintptr_t at = (uintptr_t)gp_u64map_get(&bands->index, key);

	if (at)
		return at - 1;
	if (bands->n == bands->cap) {
		size_t cap = bands->cap ? bands->cap * 2 : 64;
		struct gp_an_alloc *v = realloc(bands->v, cap * sizeof(*v));
		struct gp_an_frames *st;

		if (!v)
			return SIZE_MAX;
		bands->v = v;
		st = realloc(bands->stacks, cap * sizeof(*st));
		if (!st)
			return SIZE_MAX;
		bands->stacks = st;
		bands->cap = cap;
	}
	if (gp_u64map_put(&bands->index, key, (void *)(uintptr_t)(bands->n + 1)))
		return SIZE_MAX;
	memset(&bands->v[bands->n], 0, sizeof(bands->v[0]));
	memset(&bands->stacks[bands->n], 0, sizeof(bands->stacks[0]));
	alloc_fill(b, p, s, m, &bands->v[bands->n]);
	if (line_of(p, m->r)) {
		frames_fill(b, stack_of(p, m->r), &bands->stacks[bands->n]);
		bands->has_stacks = 1;
	}
	return bands->n++;
}

/* blocks the breakdowns of a device lay out in their segments, at most
 * (3 numbers each in the page): past it, segments keep their sums */
#define BREAKDOWN_BLOCKS 50000
/* segments the breakdowns of a device list, at most (about 100 bytes each
 * in the page; a program may hold thousands, the same at every moment):
 * past it, a breakdown keeps their sum (reserved) alone */
#define BREAKDOWN_SEGMENTS 10000

/* What the breakdowns of a device may still list. */
struct breakdown_budget {
	size_t blocks, segments;
};

static int member_addr_cmp(const void *x, const void *y)
{
	const struct an_member *a = *(const struct an_member *const *)x, *b = *(const struct an_member *const *)y;

	return a->r->addr < b->r->addr ? -1 : a->r->addr > b->r->addr;
}

/* s's blocks in the segments (by address), into *out; a block's
 * category as its index in cats' categories; *budget: blocks that may
 * still be listed (taken from). */
static void segments_fill(struct bld *b, const struct an_set *s, const struct gp_an_set *cats,
			  const struct an_seg *segs, size_t nsegs, size_t *budget, struct gp_an_segment **out,
			  size_t *nout)
{
	const struct an_member **by_addr = s->n ? malloc(s->n * sizeof(*by_addr)) : NULL;
	int cat_index[CAT_N];
	size_t k = 0;

	*out = NULL;
	*nout = 0;
	if (s->n && !by_addr) {
		b->oom = 1;
		return;
	}
	for (int c = 0; c < CAT_N; c++) {
		cat_index[c] = -1;
		for (size_t i = 0; i < cats->ncategories; i++)
			if (!strcmp(cats->categories[i].category, an_cat_names[c]))
				cat_index[c] = (int)i;
	}
	/* PyTorch's blocks only: with expandable segments, the pages it
	 * mapped are allocations at the same addresses */
	size_t nb = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->m[i].r->flags & R_TORCH)
			by_addr[nb++] = &s->m[i];
	if (nb)
		qsort(by_addr, nb, sizeof(*by_addr), member_addr_cmp);
	*out = arr(b, nsegs, sizeof(**out));
	for (size_t g = 0; *out && g < nsegs; g++) {
		struct gp_an_segment *e = &(*out)[(*nout)++];
		uint64_t at = segs[g].addr, end = segs[g].addr + segs[g].bytes;
		size_t first;

		e->addr = segs[g].addr;
		e->bytes = segs[g].bytes;
		while (k < nb && by_addr[k]->r->addr < at)
			k++;
		first = k;
		for (; k < nb && by_addr[k]->r->addr < end; k++) {
			const struct an_rec *r = by_addr[k]->r;

			if (r->addr > at && r->addr - at > e->largest_free)
				e->largest_free = r->addr - at;
			e->used += r->bytes;
			if (r->addr + r->bytes > at)
				at = r->addr + r->bytes;
		}
		if (end > at && end - at > e->largest_free)
			e->largest_free = end - at;
		e->nblocks = k - first;
		if (e->nblocks > *budget)
			continue;
		*budget -= e->nblocks;
		e->has_blocks = 1;
		e->blocks = arr(b, 3 * e->nblocks, sizeof(*e->blocks));
		for (size_t i = 0; e->blocks && i < e->nblocks; i++) {
			const struct an_member *m = by_addr[first + i];

			e->blocks[3 * i] = (int64_t)(m->r->addr - e->addr);
			e->blocks[3 * i + 1] = (int64_t)m->r->bytes;
			e->blocks[3 * i + 2] = s->torch ? cat_index[m->cat] : -1;
		}
	}
	free(by_addr);
}

/* What was live at ts (recs, borrowed): by category, innermost layer and
 * source line, its largest allocations (into bands), and how its blocks
 * lie in PyTorch's segments (segs, where known). */
static void breakdown_fill(struct bld *b, struct an_pd *pd, struct an_rec **recs, size_t n, int64_t ts,
			   int64_t from, int64_t to, uint64_t first_event, uint64_t events, uint64_t bytes,
			   uint32_t step, uint8_t phase,
			   const struct an_seg *segs, size_t nsegs, struct breakdown_budget *budget,
			   struct bands *bands, struct gp_an_breakdown *o)
{
	struct an_proc *p = pd->proc;
	struct an_grpset layers = { 0 }, lines = { 0 };
	struct an_set s;
	size_t nlargest;

	o->t = gp_an_round((double)(ts - b->a->origin) / 1e9, 9);
	o->from = sec(b, from);
	o->to = sec(b, to);
	o->first_event = first_event;
	o->events = events;
	o->bytes = bytes;
	an_step_label(p, step, &o->step, &o->step_when);
	o->phase = phase_name(p, phase);
	if (an_set_make(b->a, p, recs, n, &s)) {
		b->oom = 1;
		return;
	}
	o->set.live_bytes = s.bytes;
	o->set.live_allocations = s.n;
	if (s.torch)
		by_category(b, &s, &o->set);
	o->has_lines = p->hook_stacks;
	for (size_t i = 0; i < s.n; i++) {
		const struct an_rec *r = s.m[i].r;
		const struct an_sframe *f = line_of(p, r);

		an_grp_add(&layers, (uint64_t)(uintptr_t)r->layer, r->layer ? r->layer->s : no_layer(&s), r->bytes);
		an_grp_add(&lines, (uint64_t)(uintptr_t)(f ? stack_of(p, r)->key : NULL),
			   f ? frame_name(b, f) : NO_LINE_NAME, r->bytes);
		o->has_lines |= f != NULL;
	}
	holders_of(b, &layers, s.bytes, 1, &o->by_layer, &o->nlayer);
	if (o->has_lines)
		holders_of(b, &lines, s.bytes, 0, &o->by_line, &o->nline);
	an_grp_free(&layers);
	an_grp_free(&lines);
	if (nsegs) {
		uint64_t sum = 0;

		for (size_t i = 0; i < nsegs; i++)
			sum += segs[i].bytes;
		o->reserved = opt(1, sum);
	}
	/* their layout within the budget; past it, their sum alone */
	if (nsegs && nsegs <= budget->segments) {
		budget->segments -= nsegs;
		segments_fill(b, &s, &o->set, segs, nsegs, &budget->blocks, &o->segments, &o->nsegments);
		o->has_segments = 1;
	}
	if (s.n)
		qsort(s.m, s.n, sizeof(*s.m), member_cmp);
	nlargest = s.n < BREAKDOWN_BANDS ? s.n : BREAKDOWN_BANDS;
	while (nlargest > BREAKDOWN_ROWS && s.m[nlargest - 1].r->bytes < s.bytes / BREAKDOWN_BAND_SHARE)
		nlargest--;
	o->largest = arr(b, nlargest, sizeof(*o->largest));
	for (size_t i = 0; o->largest && i < nlargest; i++) {
		size_t k = band_of(b, p, &s, &s.m[i], bands);

		if (k == SIZE_MAX) {
			b->oom = 1;
			break;
		}
		o->largest[o->nlargest++] = k;
	}
	an_set_free(b->a, &s);
}

/* A moment by how much it held: the most first, the earlier on a tie. */
struct moment_rank {
	uint64_t bytes;
	size_t i;
};

static int moment_rank_cmp(const void *x, const void *y)
{
	const struct moment_rank *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* The run's moments (with the timeline) and --at's, and the bands they
 * name. */
static void moments_fill(struct bld *b, struct an_pd *pd, struct gp_an_device *d)
{
	const struct an_moments *mo = &pd->mo;
	struct bands bands = { 0 };
	struct breakdown_budget budget = { BREAKDOWN_BLOCKS, BREAKDOWN_SEGMENTS };
	struct moment_rank order[AN_MOMENTS];
	size_t n = 0, at[AN_MOMENTS];

	if (an_moments_end(b->a, pd))
		b->oom = 1;
	/* each moment's place in time order */
	for (size_t i = 0; pd->has_tl && mo->started && i < AN_MOMENTS; i++) {
		if (!mo->v[i].set)
			continue;
		order[n] = (struct moment_rank){ mo->v[i].bytes, i };
		at[i] = n++;
	}
	d->moments = arr(b, n, sizeof(*d->moments));
	/* the most live first: within the budgets of blocks and segments
	 * the moments a user looks at most (the peak's lists all of its
	 * segments, whatever their number) */
	qsort(order, n, sizeof(order[0]), moment_rank_cmp);
	for (size_t k = 0; d->moments && k < n; k++) {
		size_t i = order[k].i;
		const struct an_moment *m = &mo->v[i];
		uint64_t first = (uint64_t)i * mo->width;

		if (k == 0 && m->nsegs > budget.segments)
			budget.segments = m->nsegs;
		breakdown_fill(b, pd, m->m, m->n, m->ts, mo->from[i], mo->to[i], first,
			       mo->events - first < mo->width ? mo->events - first : mo->width, m->bytes, m->step,
			       m->phase, m->segs, m->nsegs, &budget, &bands, &d->moments[at[i]]);
	}
	d->nmoments = d->moments ? n : 0;
	if (b->a->has_at) {
		struct an_rec **recs;
		size_t nrecs;
		int oom;

		recs = an_snap_members(pd, &pd->at, &nrecs, &oom);
		if (oom)
			b->oom = 1;
		budget = (struct breakdown_budget){ SIZE_MAX, SIZE_MAX }; /* one breakdown: all of them */
		breakdown_fill(b, pd, recs, nrecs, pd->at_ts, pd->at_ts, pd->at_ts, pd->at_events, 0, pd->at_bytes, pd->at_step,
			       pd->at_phase, pd->at_segs, pd->at_nsegs, &budget, &bands, &d->at);
		d->at.after_end = pd->at_after_end;
		d->has_at = 1;
		free(recs);
	}
	d->bands = arr(b, bands.n, sizeof(*d->bands));
	if (d->bands) {
		memcpy(d->bands, bands.v, bands.n * sizeof(*d->bands));
		d->nbands = bands.n;
	}
	if (d->bands && bands.has_stacks) {
		d->band_stacks = arr(b, bands.n, sizeof(*d->band_stacks));
		if (d->band_stacks)
			memcpy(d->band_stacks, bands.stacks, bands.n * sizeof(*d->band_stacks));
	}
	free(bands.v);
	free(bands.stacks);
	gp_u64map_free(&bands.index);
}

static void device_fill(struct bld *b, struct an_pd *pd, int top, struct gp_an_device *d)
{
	struct an_proc *p = pd->proc;
	const struct an_devinfo *di = &p->src->dev[pd->device];
	struct an_leak lk;
	struct an_kept kept = { 0 };
	size_t n = pd->nooms, lead = SIZE_MAX;

	d->pid = p->src->pid;
	d->trace = (size_t)p->idx;
	d->device = (int)pd->device;
	d->name = astr(b, di->name);
	d->uuid = astr(b, di->uuid);
	d->capacity = opt(di->total_memory != 0, di->total_memory);
	d->mode = (enum gp_an_mode)p->mode;
	summary_fill(b, pd, &d->summary);
	d->has_peak = pd->fw_peak != 0;
	if (d->has_peak)
		peak_fill(b, pd, top, &d->peak, &kept);
	outline_fill(b, pd, &d->outline);
	steps_fill(b, pd, d);
	timeline_fill(b, pd, &d->timeline);
	moments_fill(b, pd, d);
	leak_fill(b, pd, di->total_memory, &lk, &d->leak);
	growth_fill(pd, &d->growth);
	if (an_advise_run(b->r, d, &kept, &d->advice, &d->nadvice))
		b->oom = 1;
	d->ooms = arr(b, n, sizeof(*d->ooms));
	/* First the failure that ended the program: the newest fatal one, else
	 * the newest the program got past by completing later steps. Then the
	 * others by outcome (fatal, later steps, caught, retried), each in
	 * time order. */
	for (int k = GP_AN_OOM_FATAL; k <= GP_AN_OOM_LATER_STEPS && lead == SIZE_MAX; k++)
		for (size_t j = pd->nooms; j > 0 && lead == SIZE_MAX; j--)
			if (oom_outcome(p, &pd->ooms[j - 1]) == (enum gp_an_oom_outcome)k)
				lead = j - 1;
	if (d->ooms && lead != SIZE_MAX)
		oom_fill(b, pd, &pd->ooms[lead], 1, di->total_memory, &lk, top, &d->ooms[0]);
	for (size_t i = lead != SIZE_MAX, k = 0; d->ooms && k < GP_AN_OOM_N; k++)
		for (size_t j = 0; j < pd->nooms; j++)
			if (j != lead && oom_outcome(p, &pd->ooms[j]) == (enum gp_an_oom_outcome)k)
				oom_fill(b, pd, &pd->ooms[j], 1, di->total_memory, &lk, top, &d->ooms[i++]);
	d->nooms = d->ooms ? n : 0;
	oom_outcomes_fill(pd, d);
	d->oom_count = pd->oom_count;
	d->ooms_left_out.count = pd->oom_out.count;
	d->ooms_left_out.recovered = pd->oom_out.recovered;
	d->ooms_left_out.raised = pd->oom_out.raised;
	d->ooms_left_out.released = pd->oom_out.released;
	d->ooms_left_out.retries = pd->oom_out.retries;
}

static void gpus_fill(struct bld *b)
{
	struct an_analysis *a = b->a;
	size_t n = 0;

	for (size_t g = 0; g < a->ngpus; g++)
		n += a->gpus[g].npds >= 2;
	b->r->gpus = arr(b, n, sizeof(*b->r->gpus));
	for (size_t g = 0; b->r->gpus && g < a->ngpus; g++) {
		struct an_gpu *gpu = &a->gpus[g];
		struct gp_an_gpu *o;
		const struct an_devinfo *di;

		if (gpu->npds < 2)
			continue;
		di = &gpu->pds[0]->proc->src->dev[gpu->pds[0]->device];
		o = &b->r->gpus[b->r->ngpus++];
		o->uuid = astr(b, gpu->uuid);
		o->name = astr(b, di->name);
		o->capacity = opt(di->total_memory != 0, di->total_memory);
		o->peak = gpu->peak;
		o->peak_t = gpu->peak ? sec(b, gpu->peak_ts) : NAN;
		o->by_process = arr(b, gpu->npds, sizeof(*o->by_process));
		for (size_t i = 0; o->by_process && i < gpu->npds; i++) {
			o->by_process[i].pid = gpu->pds[i]->proc->src->pid;
			o->by_process[i].device = (int)gpu->pds[i]->device;
			o->by_process[i].bytes = gpu->peak_by_pd[i];
		}
		o->nby_process = o->by_process ? gpu->npds : 0;
	}
}

struct gp_an_result *an_result_build(struct an_analysis *a)
{
	const struct gp_an_settings *s = a->settings;
	struct gp_an_result *r = gp_an_result_new();
	struct bld b = { a, r, 0 };
	size_t nd = 0;

	if (!r)
		return NULL;
	r->version = GPUPROF_VERSION;
	r->top = s->top;
	r->device = s->device >= 0 ? s->device : -1;
	r->process = s->pid >= 0 ? s->pid : -1;
	r->time_origin_ns = a->origin;
	r->traces = arr(&b, a->nprocs, sizeof(*r->traces));
	for (size_t i = 0; r->traces && i < a->nprocs; i++)
		trace_fill(&b, a->procs[i], &r->traces[i]);
	r->ntraces = r->traces ? a->nprocs : 0;
	for (size_t i = 0; i < a->nprocs; i++)
		for (int d = 0; d < AN_MAX_DEVICES; d++)
			nd += a->procs[i]->pd[d] && (s->device < 0 || d == s->device);
	r->devices = arr(&b, nd, sizeof(*r->devices));
	for (size_t i = 0; r->devices && i < a->nprocs; i++) {
		struct an_proc *p = a->procs[i];

		for (int d = 0; d < AN_MAX_DEVICES; d++) {
			if (!p->pd[d] || (s->device >= 0 && d != s->device))
				continue;
			device_fill(&b, p->pd[d], s->top, &r->devices[r->ndevices++]);
		}
	}
	gpus_fill(&b);
	if (!b.oom && gp_an_ranks_fill(r))
		b.oom = 1;
	if (b.oom) {
		gp_an_result_free(r);
		return NULL;
	}
	return r;
}
