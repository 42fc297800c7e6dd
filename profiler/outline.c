/* The flight recorder's outline of the run (outline.h). */
#include "outline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json_buf.h"
#include "torch_marks.h"
#include "trace_format.h"
#include "u64_map.h"

const char *const gp_outline_cat_names[GP_OUTLINE_CATS] = {
	"parameters", "gradients", "optimizer state", "activations", "temporaries", "inputs", "other",
};
const char *const gp_outline_closed_names[3] = { "step", "second", "end" };

enum { CAT_PARAMETERS, CAT_GRADIENTS, CAT_OPTIMIZER, CAT_ACTIVATIONS, CAT_TEMPORARIES, CAT_INPUTS, CAT_OTHER,
       /* made before the first forward: parameters once a forward has
	* run, else other (a program without modules) */
       CAT_BEFORE_FWD, KCATS };
enum { PH_NONE, PH_BACKWARD, PH_OPTIMIZER, PH_ZERO_GRAD };
enum { FR_OTHER, FR_FWD, FR_PHASE };

#define NO_LAYER 0     /* "(no layer)" */
#define OTHER_LAYERS 1 /* "(other layers)": past GP_OUTLINE_MAX_LAYERS */
#define MAX_DEPTH 128  /* push ranges kept per thread; deeper ones counted */
#define MAX_THREADS 512
#define MAX_PHASES 64
/* the totals' length, per device: every layer's (a device's 230 KiB) */
#define NKEYS ((size_t)GP_OUTLINE_MAX_LAYERS * KCATS)

/* A live block (torch.alloc) or stream-ordered allocation */
struct ol_block {
	uint64_t bytes, seq;
	uint64_t range_inst; /* the innermost range it was made in, 0: none */
	uint64_t phase_inst; /* the backward or optimizer phase, 0: none */
	uint32_t key;        /* layer * KCATS + category */
	uint32_t device;
};

struct ol_frame {
	uint8_t kind;
	uint32_t layer; /* FR_FWD: its full layer */
	uint64_t inst;
};

struct ol_thread {
	int64_t tid;
	uint32_t depth, lost;   /* lost: pushes past MAX_DEPTH */
	uint32_t nfwd;
	struct ol_frame stack[MAX_DEPTH];
	uint64_t bwd_id, bwd_inst;
	uint32_t bwd_layer;
	uint8_t has_bwd;
};

struct ol_phase {
	uint64_t inst;
	uint8_t phase;
};

struct ol_dev {
	int used;
	uint64_t total;          /* the device's size, from gpuprof.device */
	uint64_t allocated, reserved, device_bytes, live;
	uint64_t allocated_peak, reserved_peak, device_peak;
	int64_t peak_ns;
	uint64_t ooms, oom_bytes;
	int peak_unsaved;        /* allocated at a new most: snap is behind */
	uint64_t snap_seq;       /* blocks made up to it are in snap */
	uint64_t *live_by_key;   /* bytes alive by key (NKEYS) */
	uint64_t *snap_by_key;   /* live_by_key at the stretch's peak */
};

/* A string table: names to small numbers, open addressing */
struct ol_names {
	char **v;
	size_t n, cap;
	uint32_t *slots; /* index + 1; 0: empty */
	size_t nslots;
};

struct gp_outline {
	uint64_t seq, next_inst, records, left_out;
	struct ol_names layers;   /* full layer names; 0 and 1 fixed */
	struct ol_names fwd;      /* "fwd:path" names seen, index into path_layer */
	uint32_t *path_layer;     /* by fwd index: the full layer learned at its push */
	size_t cap_path;
	struct ol_dev dev[GP_OUTLINE_MAX_DEVICES];
	struct gp_u64map blocks;  /* torch.alloc: addr -> ol_block */
	struct gp_u64map asyncs;  /* stream-ordered allocations: addr -> ol_block */
	struct gp_u64map devmem;  /* kind device allocations: addr -> bytes + 1 */
	struct gp_u64map open;    /* open range instances: inst -> (void *)1 */
	struct ol_thread *threads[MAX_THREADS];
	size_t nthreads;
	struct ol_phase phases[MAX_PHASES];
	size_t nphases;
	int seen_fwd;
	int64_t begin_ns, last_step_ns;
	int64_t now_ns;           /* the latest ts seen */
	uint64_t last_step, steps_seen;
	int have_begin;
	struct gp_outline_rec *queue;
	size_t qhead, qn, qcap;
};

/* ---- names ---- */

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int names_grow(struct ol_names *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 64;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t k = hash_str(t->v[i], strlen(t->v[i])) & (nslots - 1);

		while (slots[k])
			k = (k + 1) & (nslots - 1);
		slots[k] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* The index of name (n bytes), added if new and room is left (max):
 * -1 when not. */
static long names_get(struct ol_names *t, const char *name, size_t n, size_t max)
{
	size_t k;
	char *copy;

	if (t->nslots) {
		for (k = hash_str(name, n) & (t->nslots - 1); t->slots[k]; k = (k + 1) & (t->nslots - 1)) {
			const char *s = t->v[t->slots[k] - 1];

			if (!strncmp(s, name, n) && !s[n])
				return (long)t->slots[k] - 1;
		}
	}
	if (t->n >= max)
		return -1;
	if ((t->n + 1) * 2 > t->nslots && names_grow(t))
		return -1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	if (!(copy = malloc(n + 1)))
		return -1;
	memcpy(copy, name, n);
	copy[n] = 0;
	t->v[t->n] = copy;
	for (k = hash_str(name, n) & (t->nslots - 1); t->slots[k]; k = (k + 1) & (t->nslots - 1))
		;
	t->slots[k] = (uint32_t)t->n + 1;
	return (long)t->n++;
}

static void names_free(struct ol_names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slots);
}

/* A full layer's index; past the table's room, "(other layers)". */
static uint32_t layer_of(struct gp_outline *o, const char *name, size_t n)
{
	long i = names_get(&o->layers, name, n, GP_OUTLINE_MAX_LAYERS);

	if (i < 0)
		return OTHER_LAYERS;
	return (uint32_t)i;
}

/* ---- devices ---- */

static struct ol_dev *dev_get(struct gp_outline *o, uint64_t device)
{
	struct ol_dev *d;

	if (device >= GP_OUTLINE_MAX_DEVICES)
		return NULL;
	d = &o->dev[device];
	if (d->used)
		return d;
	d->live_by_key = calloc(NKEYS, sizeof(uint64_t));
	d->snap_by_key = calloc(NKEYS, sizeof(uint64_t));
	if (!d->live_by_key || !d->snap_by_key) {
		free(d->live_by_key);
		free(d->snap_by_key);
		d->live_by_key = d->snap_by_key = NULL;
		return NULL;
	}
	d->used = 1;
	d->peak_unsaved = 1;
	return d;
}

/* The holders at the stretch's peak are the live ones now: allocated is
 * about to go down, or the stretch ends, while at its most. */
static void settle(struct gp_outline *o, struct ol_dev *d)
{
	if (!d->peak_unsaved)
		return;
	memcpy(d->snap_by_key, d->live_by_key, o->layers.n * KCATS * sizeof(uint64_t));
	d->snap_seq = o->seq;
	d->peak_unsaved = 0;
}

static void raise_peaks(struct ol_dev *d, int64_t ts_ns)
{
	if (d->allocated > d->allocated_peak) {
		d->allocated_peak = d->allocated;
		d->peak_ns = ts_ns;
		d->peak_unsaved = 1;
	}
	if (d->reserved > d->reserved_peak)
		d->reserved_peak = d->reserved;
	if (d->device_bytes > d->device_peak)
		d->device_peak = d->device_bytes;
}

/* ---- threads and ranges ---- */

static struct ol_thread *thread_get(struct gp_outline *o, int64_t tid)
{
	struct ol_thread *t;

	for (size_t i = 0; i < o->nthreads; i++)
		if (o->threads[i]->tid == tid)
			return o->threads[i];
	if (o->nthreads == MAX_THREADS || !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->tid = tid;
	o->threads[o->nthreads++] = t;
	return t;
}

static uint8_t phase_of(const char *s, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && !memcmp(s, lit, n))
	if (IS("backward"))
		return PH_BACKWARD;
	if (IS("optimizer.step"))
		return PH_OPTIMIZER;
	if (IS("zero_grad"))
		return PH_ZERO_GRAD;
	return PH_NONE;
#undef IS
}

/* The full layer of a fwd: range pushed on t: root.path, root being the
 * thread's outermost module when it is a named root (<Net>); learned
 * once per name, as the analysis does, so that bwd: finds it. */
static uint32_t fwd_layer(struct gp_outline *o, const struct ol_thread *t, const char *name, size_t n)
{
	enum { P = GP_TORCH_RANGE_PREFIX_LEN };
	long fi = names_get(&o->fwd, name, n, GP_OUTLINE_MAX_LAYERS);
	const char *root = NULL;
	size_t root_n = 0;
	uint32_t layer;
	char buf[1024];

	if (fi >= 0 && (size_t)fi < o->cap_path && o->path_layer[fi])
		return o->path_layer[fi];
	for (uint32_t i = 0; i < t->depth && i < MAX_DEPTH; i++) {
		if (t->stack[i].kind == FR_FWD) {
			root = o->layers.v[t->stack[i].layer];
			root_n = strlen(root);
			break;
		}
	}
	if (root && root[0] == '<' && root_n + 1 + (n - P) < sizeof(buf)) {
		memcpy(buf, root, root_n);
		buf[root_n] = '.';
		memcpy(buf + root_n + 1, name + P, n - P);
		layer = layer_of(o, buf, root_n + 1 + n - P);
	} else {
		layer = layer_of(o, name + P, n - P);
	}
	if (fi >= 0) {
		if ((size_t)fi >= o->cap_path) {
			size_t cap = o->cap_path ? o->cap_path * 2 : 64;
			uint32_t *p;

			while (cap <= (size_t)fi)
				cap *= 2;
			if (!(p = realloc(o->path_layer, cap * sizeof(*p))))
				return layer;
			memset(p + o->cap_path, 0, (cap - o->cap_path) * sizeof(*p));
			o->path_layer = p;
			o->cap_path = cap;
		}
		o->path_layer[fi] = layer;
	}
	return layer;
}

/* The layer of a bwd: range: its module's forward layer, learned at its
 * push; else its path. */
static uint32_t bwd_layer(struct gp_outline *o, const char *name, size_t n)
{
	enum { P = GP_TORCH_RANGE_PREFIX_LEN };
	char buf[1024];
	long fi;

	if (n < sizeof(buf)) {
		memcpy(buf, GP_TORCH_FWD_PREFIX, P);
		memcpy(buf + P, name + P, n - P);
		fi = names_get(&o->fwd, buf, n, 0); /* look up only */
		if (fi >= 0 && (size_t)fi < o->cap_path && o->path_layer[fi])
			return o->path_layer[fi];
	}
	return layer_of(o, name + P, n - P);
}

static void open_inst(struct gp_outline *o, uint64_t inst)
{
	if (gp_u64map_put(&o->open, inst, (void *)1))
		o->left_out++;
}

static void push(struct gp_outline *o, const struct gp_tw_event *ev)
{
	struct ol_thread *t = thread_get(o, ev->tid);
	struct ol_frame f = { FR_OTHER, NO_LAYER, ++o->next_inst };

	if (!t)
		return;
	if (gp_tw_ev_starts(ev, GP_TORCH_FWD_PREFIX, GP_TORCH_RANGE_PREFIX_LEN)) {
		f.kind = FR_FWD;
		f.layer = fwd_layer(o, t, ev->name, ev->name_len);
		o->seen_fwd = 1;
	} else if (gp_tw_ev_starts(ev, "phase:", 6)) {
		f.kind = FR_PHASE;
		if (o->nphases < MAX_PHASES)
			o->phases[o->nphases++] =
				(struct ol_phase){ f.inst, phase_of(ev->name + 6, ev->name_len - 6) };
	}
	if (t->depth >= MAX_DEPTH) {
		t->lost++;
		return;
	}
	t->stack[t->depth++] = f;
	t->nfwd += f.kind == FR_FWD;
	open_inst(o, f.inst);
}

static void pop(struct gp_outline *o, const struct gp_tw_event *ev)
{
	struct ol_thread *t = thread_get(o, ev->tid);
	struct ol_frame f;

	if (!t)
		return;
	if (t->lost) {
		t->lost--;
		return;
	}
	if (!t->depth)
		return;
	f = t->stack[--t->depth];
	t->nfwd -= f.kind == FR_FWD;
	gp_u64map_del(&o->open, f.inst);
	if (f.kind == FR_PHASE) {
		for (size_t i = o->nphases; i-- > 0;) {
			if (o->phases[i].inst == f.inst) {
				memmove(&o->phases[i], &o->phases[i + 1], (o->nphases - i - 1) * sizeof(o->phases[0]));
				o->nphases--;
				break;
			}
		}
	}
}

/* bwd: ranges are start/end ranges, one open a thread (a new one replaces
 * it), ended from any thread. */
static void start(struct gp_outline *o, const struct gp_tw_event *ev)
{
	struct ol_thread *t;

	if (!gp_tw_ev_starts(ev, GP_TORCH_BWD_PREFIX, GP_TORCH_RANGE_PREFIX_LEN) || !(t = thread_get(o, ev->tid)))
		return;
	if (t->has_bwd)
		gp_u64map_del(&o->open, t->bwd_inst);
	t->has_bwd = 1;
	t->bwd_id = ev->id;
	t->bwd_inst = ++o->next_inst;
	t->bwd_layer = bwd_layer(o, ev->name, ev->name_len);
	open_inst(o, t->bwd_inst);
}

static void end(struct gp_outline *o, const struct gp_tw_event *ev)
{
	for (size_t i = 0; i < o->nthreads; i++) {
		struct ol_thread *t = o->threads[i];

		if (t->has_bwd && t->bwd_id == ev->id) {
			t->has_bwd = 0;
			gp_u64map_del(&o->open, t->bwd_inst);
			return;
		}
	}
}

/* ---- blocks ---- */

/* What a block made now on tid is for: its key and the ranges it was
 * made in. */
static void made_in(struct gp_outline *o, int64_t tid, struct ol_block *b)
{
	struct ol_thread *t = thread_get(o, tid);
	uint32_t layer = NO_LAYER;
	uint8_t phase = o->nphases ? o->phases[o->nphases - 1].phase : PH_NONE;
	int cat;

	if (t) {
		for (uint32_t i = t->depth; i-- > 0;) {
			if (t->stack[i].kind == FR_FWD) {
				layer = t->stack[i].layer;
				break;
			}
		}
		if (layer == NO_LAYER && t->has_bwd)
			layer = t->bwd_layer;
		b->range_inst = t->depth ? t->stack[t->depth - 1].inst : 0;
		if (t->has_bwd && t->bwd_inst > b->range_inst)
			b->range_inst = t->bwd_inst;
	}
	if (!o->seen_fwd)
		cat = CAT_BEFORE_FWD;
	else if (phase == PH_BACKWARD)
		cat = CAT_GRADIENTS;
	else if (phase == PH_OPTIMIZER)
		cat = CAT_OPTIMIZER;
	else if (phase == PH_ZERO_GRAD)
		cat = CAT_OTHER;
	else if (t && t->nfwd)
		cat = CAT_ACTIVATIONS;
	else
		cat = CAT_OTHER;
	if ((cat == CAT_GRADIENTS || cat == CAT_OPTIMIZER) && o->nphases)
		b->phase_inst = o->phases[o->nphases - 1].inst;
	b->key = layer * KCATS + (uint32_t)cat;
}

static void block_made(struct gp_outline *o, struct gp_u64map *m, const struct gp_tw_event *ev)
{
	struct ol_dev *d = dev_get(o, ev->has_device ? ev->device : 0);
	struct ol_block *b, *old;

	if (!d)
		return;
	if (!(b = calloc(1, sizeof(*b)))) {
		o->left_out++;
		return;
	}
	b->bytes = ev->bytes;
	b->seq = o->seq;
	b->device = (uint32_t)(ev->has_device ? ev->device : 0);
	made_in(o, ev->tid, b);
	/* an address made twice without its free: the older is gone */
	if ((old = gp_u64map_del(m, ev->addr))) {
		struct ol_dev *od = &o->dev[old->device];

		settle(o, od);
		od->allocated -= old->bytes;
		od->live--;
		od->live_by_key[old->key] -= old->bytes;
		free(old);
	}
	if (gp_u64map_put(m, ev->addr, b)) {
		o->left_out++;
		free(b);
		return;
	}
	d->allocated += b->bytes;
	d->live++;
	d->live_by_key[b->key] += b->bytes;
	raise_peaks(d, o->now_ns);
}

static int inst_open(const struct gp_outline *o, uint64_t inst)
{
	return inst && gp_u64map_get(&o->open, inst) != NULL;
}

static void block_freed(struct gp_outline *o, struct gp_u64map *m, uint64_t addr)
{
	struct ol_block *b = gp_u64map_del(m, addr);
	struct ol_dev *d;

	if (!b)
		return;
	d = &o->dev[b->device];
	settle(o, d);
	d->allocated -= b->bytes;
	d->live--;
	d->live_by_key[b->key] -= b->bytes;
	/* alive at the peak and freed in the range (or phase) it was made in:
	 * a temporary there */
	if (b->seq <= d->snap_seq && (inst_open(o, b->range_inst) || inst_open(o, b->phase_inst))) {
		uint32_t temp = b->key - b->key % KCATS + CAT_TEMPORARIES;
		uint64_t moved = b->bytes < d->snap_by_key[b->key] ? b->bytes : d->snap_by_key[b->key];

		d->snap_by_key[b->key] -= moved;
		d->snap_by_key[temp] += moved;
	}
	free(b);
}

/* A tensor mark names the layer of the block at its address; a param
 * mark, its layer and that it is a parameter: "0xADDR NBYTES LAYER". */
static void named(struct gp_outline *o, const struct gp_tw_event *ev, size_t prefix, int param)
{
	const char *s = ev->name + prefix, *e = ev->name + ev->name_len, *sp;
	uint64_t addr = 0;
	struct ol_block *b;
	struct ol_dev *d;
	uint32_t key;
	int digits = 0;

	if (e - s < 3 || s[0] != '0' || s[1] != 'x')
		return;
	for (s += 2; s < e && *s != ' '; s++, digits++) {
		int v = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (v < 0 || digits == 16)
			return;
		addr = addr << 4 | (uint64_t)v;
	}
	if (!digits || s == e || !(sp = memchr(s + 1, ' ', (size_t)(e - s - 1))) || sp + 1 >= e)
		return;
	if (!(b = gp_u64map_get(&o->blocks, addr)))
		return;
	key = layer_of(o, sp + 1, (size_t)(e - sp - 1)) * KCATS +
	      (param ? CAT_PARAMETERS : b->key % KCATS);
	if (key == b->key)
		return;
	d = &o->dev[b->device];
	settle(o, d);
	d->live_by_key[b->key] -= b->bytes;
	d->live_by_key[key] += b->bytes;
	if (b->seq <= d->snap_seq && d->snap_by_key[b->key] >= b->bytes) {
		d->snap_by_key[b->key] -= b->bytes;
		d->snap_by_key[key] += b->bytes;
	}
	b->key = key;
}

/* ---- stretches ---- */

static int holder_cmp(const void *a, const void *b)
{
	const struct gp_outline_holder *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void fill_holders(struct gp_outline *o, const struct ol_dev *d, struct gp_outline_rec *r)
{
	uint64_t cat[KCATS] = { 0 }, rest = 0;
	size_t nl = o->layers.n;

	r->ncat = r->nlayer = 0;
	for (size_t l = 0; l < nl; l++) {
		uint64_t sum = 0;

		for (int c = 0; c < KCATS; c++) {
			uint64_t v = d->snap_by_key[l * KCATS + (size_t)c];

			cat[c] += v;
			sum += v;
		}
		if (!sum)
			continue;
		if (l == OTHER_LAYERS) {
			rest += sum;
			continue;
		}
		/* the largest GP_OUTLINE_LAYERS: the smallest kept goes to rest */
		if (r->nlayer < GP_OUTLINE_LAYERS) {
			r->layer[r->nlayer++] = (struct gp_outline_holder){ o->layers.v[l], sum };
			continue;
		}
		{
			size_t min = 0;

			for (size_t i = 1; i < r->nlayer; i++)
				if (r->layer[i].bytes < r->layer[min].bytes)
					min = i;
			if (r->layer[min].bytes < sum) {
				rest += r->layer[min].bytes;
				r->layer[min] = (struct gp_outline_holder){ o->layers.v[l], sum };
			} else {
				rest += sum;
			}
		}
	}
	qsort(r->layer, r->nlayer, sizeof(r->layer[0]), holder_cmp);
	if (rest)
		r->layer[r->nlayer++] = (struct gp_outline_holder){ o->layers.v[OTHER_LAYERS], rest };
	cat[o->seen_fwd ? CAT_PARAMETERS : CAT_OTHER] += cat[CAT_BEFORE_FWD];
	for (int c = 0; c < GP_OUTLINE_CATS; c++)
		if (cat[c])
			r->cat[r->ncat++] = (struct gp_outline_holder){ gp_outline_cat_names[c], cat[c] };
	qsort(r->cat, r->ncat, sizeof(r->cat[0]), holder_cmp);
}

static void queue_push(struct gp_outline *o, const struct gp_outline_rec *r)
{
	if (o->qhead && o->qhead == o->qn) {
		o->qhead = o->qn = 0;
	}
	if (o->qn == o->qcap) {
		size_t cap = o->qcap ? o->qcap * 2 : 16;
		struct gp_outline_rec *q = realloc(o->queue, cap * sizeof(*q));

		if (!q) {
			o->left_out++;
			return;
		}
		o->queue = q;
		o->qcap = cap;
	}
	o->queue[o->qn++] = *r;
	o->records++;
}

/* Every used device's stretch ends at ts_ns; the next begins. */
static void close_all(struct gp_outline *o, int closed_by, uint64_t step, int64_t ts_ns)
{
	/* the clock of the lines seen, which come a little out of time order */
	if (ts_ns < o->now_ns)
		ts_ns = o->now_ns;
	for (int i = 0; i < GP_OUTLINE_MAX_DEVICES; i++) {
		struct ol_dev *d = &o->dev[i];
		struct gp_outline_rec r;

		if (!d->used)
			continue;
		settle(o, d);
		memset(&r, 0, sizeof(r));
		r.device = (uint32_t)i;
		r.step = step;
		r.closed_by = closed_by;
		r.begin_ns = o->begin_ns;
		r.end_ns = ts_ns;
		r.peak_ns = d->peak_ns;
		r.allocated_peak = d->allocated_peak;
		r.reserved_peak = d->reserved_peak;
		r.device_peak = d->device_peak;
		r.allocated = d->allocated;
		r.reserved = d->reserved;
		r.device_bytes = d->device_bytes;
		r.live = d->live;
		r.ooms = d->ooms;
		r.oom_bytes = d->oom_bytes;
		fill_holders(o, d, &r);
		queue_push(o, &r);
		/* the next stretch begins with what is alive now */
		d->allocated_peak = d->allocated;
		d->reserved_peak = d->reserved;
		d->device_peak = d->device_bytes;
		d->peak_ns = ts_ns;
		d->ooms = d->oom_bytes = 0;
		d->peak_unsaved = 1;
	}
	o->begin_ns = ts_ns;
}

uint64_t gp_outline_step_mark(const struct gp_tw_event *ev)
{
	uint64_t n = 0;

	if (ev->name_len <= 5 || ev->name_len > 5 + 18 || memcmp(ev->name, "step:", 5))
		return 0;
	for (size_t i = 5; i < ev->name_len; i++) {
		if (ev->name[i] < '0' || ev->name[i] > '9')
			return 0;
		n = n * 10 + (uint64_t)(ev->name[i] - '0');
	}
	return n;
}

static void stepped(struct gp_outline *o, const struct gp_tw_event *ev)
{
	uint64_t n = gp_outline_step_mark(ev);

	if (!n)
		return;
	close_all(o, GP_OUTLINE_BY_STEP, n, o->now_ns);
	o->last_step = n;
	o->last_step_ns = o->now_ns;
	o->steps_seen++;
}

/* The step a stretch closed by time is in: the one after the last mark,
 * 0 before the first. */
static uint64_t step_now(const struct gp_outline *o)
{
	return o->steps_seen ? o->last_step + 1 : 0;
}

void gp_outline_tick(struct gp_outline *o, int64_t ts_ns)
{
	if (!o->have_begin)
		return;
	if (ts_ns < o->now_ns)
		ts_ns = o->now_ns;
	if (o->steps_seen && ts_ns - o->last_step_ns < GP_OUTLINE_STEP_GAP_NS)
		return;
	if (ts_ns - o->begin_ns >= GP_OUTLINE_SECOND_NS)
		close_all(o, GP_OUTLINE_BY_SECOND, step_now(o), ts_ns);
}

void gp_outline_end(struct gp_outline *o, int64_t ts_ns)
{
	if (o->have_begin)
		close_all(o, GP_OUTLINE_BY_END, step_now(o), ts_ns);
}

/* ---- the tap ---- */

static void memory_event(struct gp_outline *o, const struct gp_tw_event *ev)
{
	struct ol_dev *d;

	if (gp_tw_ev_is(ev, GP_EV_TORCH_ALLOC) && ev->has_addr && ev->has_bytes) {
		block_made(o, &o->blocks, ev);
	} else if (gp_tw_ev_is(ev, GP_EV_TORCH_FREE) && ev->has_addr) {
		block_freed(o, &o->blocks, ev->addr);
	} else if (gp_tw_ev_is(ev, GP_EV_ALLOC) && ev->has_addr && ev->has_bytes) {
		if (ev->async)
			block_made(o, &o->asyncs, ev);
		if (ev->kind_device && (d = dev_get(o, ev->has_device ? ev->device : 0))) {
			uint64_t old = (uint64_t)(uintptr_t)gp_u64map_get(&o->devmem, ev->addr);

			if (old)
				d->device_bytes -= old - 1;
			if (gp_u64map_put(&o->devmem, ev->addr, (void *)(uintptr_t)(ev->bytes + 1)))
				o->left_out++;
			else
				d->device_bytes += ev->bytes;
			raise_peaks(d, o->now_ns);
		}
	} else if (gp_tw_ev_is(ev, GP_EV_FREE) && ev->has_addr) {
		uint64_t old = (uint64_t)(uintptr_t)gp_u64map_del(&o->devmem, ev->addr);

		block_freed(o, &o->asyncs, ev->addr);
		if (old && (d = dev_get(o, ev->has_device ? ev->device : 0)))
			d->device_bytes -= old - 1 <= d->device_bytes ? old - 1 : d->device_bytes;
	} else if (gp_tw_ev_is(ev, GP_EV_TORCH_SEGMENT_ALLOC) && ev->has_bytes) {
		if ((d = dev_get(o, ev->has_device ? ev->device : 0))) {
			d->reserved += ev->bytes;
			raise_peaks(d, o->now_ns);
		}
	} else if (gp_tw_ev_is(ev, GP_EV_TORCH_SEGMENT_FREE) && ev->has_bytes) {
		if ((d = dev_get(o, ev->has_device ? ev->device : 0)))
			d->reserved -= ev->bytes <= d->reserved ? ev->bytes : d->reserved;
	} else if ((gp_tw_ev_is(ev, GP_EV_OOM) || gp_tw_ev_is(ev, GP_EV_TORCH_OOM)) &&
		   (d = dev_get(o, ev->has_device ? ev->device : 0))) {
		d->ooms++;
		if (ev->has_bytes && ev->bytes > d->oom_bytes)
			d->oom_bytes = ev->bytes;
	}
}

void gp_outline_observe(void *ctx, const struct gp_tw_event *ev)
{
	struct gp_outline *o = ctx;
	int nvtx;

	o->seq++;
	if (!o->have_begin && ev->ts_ns) {
		o->have_begin = 1;
		o->begin_ns = ev->ts_ns;
	}
	/* lines come a little out of time order (CUPTI's buffers, the threads'
	 * events): the outline's clock is the latest time seen, so that each
	 * stretch's begin, peak and end keep their order */
	if (ev->ts_ns > o->now_ns)
		o->now_ns = ev->ts_ns;
	if (!ev->cat)
		return;
	nvtx = !strcmp(ev->cat, GP_CAT_NVTX);
	switch (ev->ph) {
	case 'B':
		if (nvtx)
			push(o, ev);
		break;
	case 'E':
		if (nvtx)
			pop(o, ev);
		break;
	case 'b':
		if (nvtx)
			start(o, ev);
		break;
	case 'e':
		if (nvtx)
			end(o, ev);
		break;
	case 'i':
		if (nvtx) {
			if (gp_tw_ev_starts(ev, "step:", 5))
				stepped(o, ev);
			else if (gp_tw_ev_starts(ev, GP_TORCH_TENSOR_PREFIX, sizeof(GP_TORCH_TENSOR_PREFIX) - 1))
				named(o, ev, sizeof(GP_TORCH_TENSOR_PREFIX) - 1, 0);
			else if (gp_tw_ev_starts(ev, GP_TORCH_PARAM_PREFIX, sizeof(GP_TORCH_PARAM_PREFIX) - 1))
				named(o, ev, sizeof(GP_TORCH_PARAM_PREFIX) - 1, 1);
		} else if (!strcmp(ev->cat, GP_CAT_MEMORY)) {
			memory_event(o, ev);
		} else if (gp_tw_ev_is(ev, GP_EV_DEVICE) && ev->has_device && ev->device < GP_OUTLINE_MAX_DEVICES) {
			/* its size, kept where the device is not used (yet) too */
			o->dev[ev->device].total = ev->total_memory;
		}
		break;
	default:
		break;
	}
	if (ev->ph == 'i' || ev->ph == 'B')
		gp_outline_tick(o, ev->ts_ns);
}

/* ---- the record as an event ---- */

/* {name: bytes, ...} into tw's args under key */
static void holders_arg(struct gp_trace_writer *tw, const char *key, const struct gp_outline_holder *h, size_t n)
{
	struct gp_buf b;

	gp_buf_init(&b, (size_t)64 << 10);
	gp_buf_putc(&b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			gp_buf_putc(&b, ',');
		gp_buf_json_str(&b, h[i].name, strlen(h[i].name));
		gp_buf_putc(&b, ':');
		gp_buf_u64(&b, h[i].bytes);
	}
	gp_buf_putc(&b, '}');
	if (!b.failed)
		gp_tw_arg_raw(tw, key, b.data, b.len);
	else
		gp_tw_arg_raw(tw, key, "{}", 2);
	gp_buf_free(&b);
}

void gp_outline_format(struct gp_trace_writer *tw, int64_t pid, const struct gp_outline_rec *r,
		       uint64_t dropped_segments, uint64_t dropped_bytes)
{
	gp_tw_begin(tw, GP_PH_OUTLINE, GP_EV_OUTLINE, GP_CAT_GPUPROF, pid, 0, r->end_ns);
	gp_tw_field_str(tw, GP_T_S, "g");
	gp_tw_args_begin(tw);
	gp_tw_arg_u64(tw, GP_F_DEVICE, r->device);
	gp_tw_arg_u64(tw, GP_F_STEP, r->step);
	gp_tw_arg_str(tw, GP_F_CLOSED_BY, gp_outline_closed_names[r->closed_by]);
	gp_tw_arg_i64(tw, GP_F_BEGIN_NS, r->begin_ns);
	gp_tw_arg_u64(tw, GP_F_ALLOCATED_PEAK, r->allocated_peak);
	gp_tw_arg_i64(tw, GP_F_PEAK_NS, r->peak_ns);
	gp_tw_arg_u64(tw, GP_F_RESERVED_PEAK, r->reserved_peak);
	gp_tw_arg_u64(tw, GP_F_DEVICE_PEAK, r->device_peak);
	gp_tw_arg_u64(tw, GP_F_ALLOCATED, r->allocated);
	gp_tw_arg_u64(tw, GP_F_RESERVED, r->reserved);
	gp_tw_arg_u64(tw, GP_F_DEVICE_BYTES, r->device_bytes);
	gp_tw_arg_u64(tw, GP_F_LIVE, r->live);
	gp_tw_arg_u64(tw, GP_F_OOMS, r->ooms);
	gp_tw_arg_u64(tw, GP_F_OOM_BYTES, r->oom_bytes);
	holders_arg(tw, GP_F_BY_CATEGORY, r->cat, r->ncat);
	holders_arg(tw, GP_F_BY_LAYER, r->layer, r->nlayer);
	gp_tw_arg_u64(tw, GP_F_DROPPED_SEGMENTS, dropped_segments);
	gp_tw_arg_u64(tw, GP_F_DROPPED_BYTES, dropped_bytes);
}

/* ---- the rest ---- */

uint64_t gp_outline_held(const struct gp_outline *o, unsigned device, uint64_t *total)
{
	const struct ol_dev *d;

	*total = 0;
	if (device >= GP_OUTLINE_MAX_DEVICES)
		return 0;
	d = &o->dev[device];
	*total = d->total;
	return d->reserved > d->device_bytes ? d->reserved : d->device_bytes;
}

int gp_outline_next(struct gp_outline *o, struct gp_outline_rec *rec)
{
	if (o->qhead == o->qn)
		return 0;
	*rec = o->queue[o->qhead++];
	return 1;
}

void gp_outline_stats(const struct gp_outline *o, struct gp_outline_stats *st)
{
	size_t used = 0;

	for (int i = 0; i < GP_OUTLINE_MAX_DEVICES; i++)
		used += o->dev[i].used != 0;
	memset(st, 0, sizeof(*st));
	st->records = o->records;
	st->blocks = o->blocks.count + o->asyncs.count;
	st->layers = o->layers.n;
	st->left_out = o->left_out;
	st->bytes = sizeof(*o) + (o->blocks.cap + o->asyncs.cap + o->devmem.cap + o->open.cap) *
					 sizeof(struct gp_u64map_slot) +
		    st->blocks * sizeof(struct ol_block) + used * 2 * NKEYS * sizeof(uint64_t) +
		    o->nthreads * sizeof(struct ol_thread) + o->qcap * sizeof(struct gp_outline_rec);
	for (size_t i = 0; i < o->layers.n; i++)
		st->bytes += strlen(o->layers.v[i]) + 1;
	for (size_t i = 0; i < o->fwd.n; i++)
		st->bytes += strlen(o->fwd.v[i]) + 1;
}

int gp_outline_new(struct gp_outline **out)
{
	struct gp_outline *o = calloc(1, sizeof(*o));

	*out = NULL;
	if (!o)
		return -ENOMEM;
	if (names_get(&o->layers, "(no layer)", 10, 2) != NO_LAYER ||
	    names_get(&o->layers, "(other layers)", 14, 2) != OTHER_LAYERS) {
		gp_outline_free(o);
		return -ENOMEM;
	}
	*out = o;
	return 0;
}

static void free_blocks(struct gp_u64map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].val);
	gp_u64map_free(m);
}

void gp_outline_free(struct gp_outline *o)
{
	if (!o)
		return;
	free_blocks(&o->blocks);
	free_blocks(&o->asyncs);
	gp_u64map_free(&o->devmem);
	gp_u64map_free(&o->open);
	for (int i = 0; i < GP_OUTLINE_MAX_DEVICES; i++) {
		free(o->dev[i].live_by_key);
		free(o->dev[i].snap_by_key);
	}
	for (size_t i = 0; i < o->nthreads; i++)
		free(o->threads[i]);
	names_free(&o->layers);
	names_free(&o->fwd);
	free(o->path_layer);
	free(o->queue);
	free(o);
}
