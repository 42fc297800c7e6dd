/* The flight recorder's window head (window_head.h). */
#include "window_head.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "torch_marks.h"
#include "trace_format.h"
#include "u64_map.h"

/* Counter tracks remembered (a few per device), names of marks kept */
#define WH_MAX_COUNTERS 1024
#define WH_COUNTER_NAME 48
/* addresses named by marks: past it new names are left out */
#define WH_MAX_MARKS (1u << 20)
#define WH_MAX_SEGMENTS (1u << 20)

/* A line kept for replay: its text and its place in the trace. */
struct wh_line {
	uint64_t seq;
	uint32_t refs;
	uint32_t mark; /* the last replay that took it */
	size_t len;
	char text[];
};

/* An NVTX range: push/pop on a thread, or start/end by id (async). Held by
 * the list of open ranges while open and by every context made inside. */
struct wh_range {
	struct wh_line *begin, *end; /* end: NULL while open */
	uint32_t refs;
	uint8_t async;
	int64_t tid;
	uint64_t id;
};

/* A moment allocations were made in: the ranges open in the process then,
 * in the order opened, and the step. Held by those allocations. */
struct wh_ctx {
	uint32_t refs;
	uint32_t n;
	struct wh_line *step;
	struct wh_range *r[];
};

/* A live block or allocation: its line and when it was made. */
struct wh_live {
	struct wh_line *line;
	struct wh_ctx *ctx;
};

struct wh_seg {
	uint64_t addr, bytes; /* bytes 0: a free kept to replay (part of a mapping) */
	int64_t pid;
	struct wh_line *line;
};

struct wh_counter {
	int64_t pid;
	char name[WH_COUNTER_NAME];
	struct wh_line *line;
};

struct gp_window_head {
	size_t max_bytes, bytes;
	uint64_t lines, seq, left_out, nranges, nctx;
	uint32_t mark;
	struct wh_line **statics;
	size_t nstatics, cap_statics;
	struct wh_counter counters[WH_MAX_COUNTERS];
	size_t ncounters;
	struct gp_u64map blocks; /* PyTorch's blocks: addr -> wh_live */
	struct gp_u64map allocs; /* CUDA's allocations: addr -> wh_live */
	struct gp_u64map pools;  /* pool addr -> its creation's line */
	struct gp_u64map marks;  /* addr -> the mark naming it (tensor, segment) */
	struct wh_seg *segs;
	size_t nsegs, cap_segs;
	struct wh_range **open;  /* open ranges, in the order opened */
	size_t nopen, cap_open;
	struct wh_line *step;    /* the current step's mark */
	struct wh_line *capture; /* the last gpuprof.alloc_capture */
	struct wh_ctx *cur;      /* the context of now; NULL: changed since */
};

/* ---- lines, ranges, contexts ---- */

static struct wh_line *line_new(struct gp_window_head *wh, const struct gp_tw_event *ev)
{
	struct wh_line *l;

	if (wh->bytes + ev->len > wh->max_bytes || !(l = malloc(sizeof(*l) + ev->len))) {
		wh->left_out++;
		return NULL;
	}
	l->seq = wh->seq;
	l->refs = 1;
	l->mark = 0;
	l->len = ev->len;
	memcpy(l->text, ev->line, ev->len);
	wh->bytes += ev->len;
	wh->lines++;
	return l;
}

static struct wh_line *line_ref(struct wh_line *l)
{
	if (l)
		l->refs++;
	return l;
}

static void line_unref(struct gp_window_head *wh, struct wh_line *l)
{
	if (!l || --l->refs)
		return;
	wh->bytes -= l->len;
	wh->lines--;
	free(l);
}

static void range_unref(struct gp_window_head *wh, struct wh_range *r)
{
	if (--r->refs)
		return;
	line_unref(wh, r->begin);
	line_unref(wh, r->end);
	wh->nranges--;
	free(r);
}

static void ctx_unref(struct gp_window_head *wh, struct wh_ctx *c)
{
	if (!c || --c->refs)
		return;
	for (uint32_t i = 0; i < c->n; i++)
		range_unref(wh, c->r[i]);
	line_unref(wh, c->step);
	wh->nctx--;
	free(c);
}

/* The open ranges or the step changed: the next allocation makes a new
 * context. */
static void ctx_changed(struct gp_window_head *wh)
{
	ctx_unref(wh, wh->cur);
	wh->cur = NULL;
}

static struct wh_ctx *ctx_now(struct gp_window_head *wh)
{
	struct wh_ctx *c = wh->cur;

	if (c)
		return c;
	if (!(c = malloc(sizeof(*c) + wh->nopen * sizeof(c->r[0]))))
		return NULL;
	c->refs = 1; /* wh->cur's */
	c->n = (uint32_t)wh->nopen;
	for (size_t i = 0; i < wh->nopen; i++) {
		c->r[i] = wh->open[i];
		c->r[i]->refs++;
	}
	c->step = line_ref(wh->step);
	wh->nctx++;
	return wh->cur = c;
}

static void live_free(struct gp_window_head *wh, struct wh_live *b)
{
	if (!b)
		return;
	line_unref(wh, b->line);
	ctx_unref(wh, b->ctx);
	free(b);
}

/* ---- what a line does to the head ---- */

static void keep_static(struct gp_window_head *wh, const struct gp_tw_event *ev)
{
	struct wh_line *l;

	if (wh->nstatics == wh->cap_statics) {
		size_t cap = wh->cap_statics ? wh->cap_statics * 2 : 64;
		struct wh_line **p = realloc(wh->statics, cap * sizeof(*p));

		if (!p) {
			wh->left_out++;
			return;
		}
		wh->statics = p;
		wh->cap_statics = cap;
	}
	if ((l = line_new(wh, ev)))
		wh->statics[wh->nstatics++] = l;
}

/* Replaces *slot's line by ev's. */
static void keep_last(struct gp_window_head *wh, struct wh_line **slot, const struct gp_tw_event *ev)
{
	line_unref(wh, *slot);
	*slot = line_new(wh, ev);
}

static void keep_counter(struct gp_window_head *wh, const struct gp_tw_event *ev)
{
	size_t i;

	if (ev->name_len >= WH_COUNTER_NAME) {
		wh->left_out++;
		return;
	}
	for (i = 0; i < wh->ncounters; i++)
		if (wh->counters[i].pid == ev->pid && !strncmp(wh->counters[i].name, ev->name, ev->name_len) &&
		    !wh->counters[i].name[ev->name_len])
			break;
	if (i == wh->ncounters) {
		if (i == WH_MAX_COUNTERS) {
			wh->left_out++;
			return;
		}
		wh->counters[i].pid = ev->pid;
		memcpy(wh->counters[i].name, ev->name, ev->name_len);
		wh->counters[i].name[ev->name_len] = 0;
		wh->counters[i].line = NULL;
		wh->ncounters++;
	}
	keep_last(wh, &wh->counters[i].line, ev);
}

/* A block or allocation made now, in the context of now. */
static void keep_live(struct gp_window_head *wh, struct gp_u64map *m, const struct gp_tw_event *ev)
{
	struct wh_live *b = calloc(1, sizeof(*b));

	if (!b || !(b->line = line_new(wh, ev)) || !(b->ctx = ctx_now(wh))) {
		if (b && b->line && !b->ctx)
			wh->left_out++;
		live_free(wh, b);
		return;
	}
	b->ctx->refs++;
	/* an address made twice without its free: the older is gone */
	live_free(wh, gp_u64map_del(m, ev->addr));
	if (gp_u64map_put(m, ev->addr, b)) {
		wh->left_out++;
		live_free(wh, b);
	}
}

static void forget_mark(struct gp_window_head *wh, uint64_t addr)
{
	line_unref(wh, gp_u64map_del(&wh->marks, addr));
}

static void freed(struct gp_window_head *wh, struct gp_u64map *m, uint64_t addr)
{
	live_free(wh, gp_u64map_del(m, addr));
	forget_mark(wh, addr);
}

static void seg_remove(struct gp_window_head *wh, size_t i)
{
	line_unref(wh, wh->segs[i].line);
	memmove(&wh->segs[i], &wh->segs[i + 1], (wh->nsegs - i - 1) * sizeof(wh->segs[0]));
	wh->nsegs--;
}

static void seg_keep(struct gp_window_head *wh, const struct gp_tw_event *ev, uint64_t bytes)
{
	struct wh_line *l;

	if (wh->nsegs == wh->cap_segs) {
		size_t cap = wh->cap_segs ? wh->cap_segs * 2 : 64;
		struct wh_seg *p = cap <= WH_MAX_SEGMENTS ? realloc(wh->segs, cap * sizeof(*p)) : NULL;

		if (!p) {
			wh->left_out++;
			return;
		}
		wh->segs = p;
		wh->cap_segs = cap;
	}
	if (!(l = line_new(wh, ev)))
		return;
	wh->segs[wh->nsegs++] = (struct wh_seg){ ev->addr, bytes, ev->pid, l };
}

/* A segment given back: the segment made at its address with its size, or
 * the pages of an expandable segment it unmaps, all of them; else (part of
 * a mapping) the free is kept to replay after them. */
static void seg_free(struct gp_window_head *wh, const struct gp_tw_event *ev)
{
	uint64_t lo = ev->addr, hi = ev->addr + ev->bytes, covered = 0;
	size_t i;

	forget_mark(wh, ev->addr);
	for (i = 0; i < wh->nsegs; i++)
		if (wh->segs[i].pid == ev->pid && wh->segs[i].addr == lo && wh->segs[i].bytes == ev->bytes) {
			seg_remove(wh, i);
			return;
		}
	for (i = 0; i < wh->nsegs; i++) {
		const struct wh_seg *s = &wh->segs[i];

		if (s->pid == ev->pid && s->bytes && s->addr >= lo && s->addr + s->bytes <= hi)
			covered += s->bytes;
	}
	if (covered == ev->bytes) {
		for (i = wh->nsegs; i-- > 0;) {
			const struct wh_seg *s = &wh->segs[i];

			if (s->pid == ev->pid && s->bytes && s->addr >= lo && s->addr + s->bytes <= hi)
				seg_remove(wh, i);
		}
		return;
	}
	seg_keep(wh, ev, 0);
}

/* "0x..." at s, up to the first space or the end. */
static int mark_addr(const char *s, const char *end, uint64_t *addr)
{
	uint64_t v = 0;
	int digits = 0;

	if (end - s < 3 || s[0] != '0' || s[1] != 'x')
		return 0;
	for (s += 2; s < end && *s != ' '; s++, digits++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (d < 0 || digits == 16)
			return 0;
		v = v << 4 | (uint64_t)d;
	}
	*addr = v;
	return digits > 0;
}

static void keep_mark(struct gp_window_head *wh, const struct gp_tw_event *ev, size_t prefix)
{
	struct wh_line *l, *old;
	uint64_t addr;

	if (!mark_addr(ev->name + prefix, ev->name + ev->name_len, &addr))
		return;
	old = gp_u64map_get(&wh->marks, addr);
	if (!old && wh->marks.count >= WH_MAX_MARKS) {
		wh->left_out++;
		return;
	}
	if (!(l = line_new(wh, ev)))
		return;
	if (gp_u64map_put(&wh->marks, addr, l)) {
		wh->left_out++;
		line_unref(wh, l);
		return;
	}
	line_unref(wh, old);
}

static void nvtx_mark(struct gp_window_head *wh, const struct gp_tw_event *ev)
{
#define STARTS(lit) gp_tw_ev_starts(ev, lit, sizeof(lit) - 1)
	if (STARTS("step:")) {
		keep_last(wh, &wh->step, ev);
		ctx_changed(wh);
	} else if (STARTS("gpuprof:torch ")) {
		keep_static(wh, ev);
	} else if (STARTS(GP_TORCH_TENSOR_PREFIX)) {
		keep_mark(wh, ev, sizeof(GP_TORCH_TENSOR_PREFIX) - 1);
	} else if (STARTS(GP_TORCH_PARAM_PREFIX)) {
		keep_mark(wh, ev, sizeof(GP_TORCH_PARAM_PREFIX) - 1);
	} else if (STARTS("gpuprof:torch.segment ")) {
		keep_mark(wh, ev, sizeof("gpuprof:torch.segment ") - 1);
	}
#undef STARTS
}

static void range_open(struct gp_window_head *wh, const struct gp_tw_event *ev, int async)
{
	struct wh_range *r;

	if (wh->nopen == wh->cap_open) {
		size_t cap = wh->cap_open ? wh->cap_open * 2 : 32;
		struct wh_range **p = realloc(wh->open, cap * sizeof(*p));

		if (!p) {
			wh->left_out++;
			return;
		}
		wh->open = p;
		wh->cap_open = cap;
	}
	if (!(r = calloc(1, sizeof(*r)))) {
		wh->left_out++;
		return;
	}
	if (!(r->begin = line_new(wh, ev))) {
		free(r);
		return;
	}
	r->refs = 1; /* the open list's */
	r->async = (uint8_t)async;
	r->tid = ev->tid;
	r->id = ev->id;
	wh->nranges++;
	wh->open[wh->nopen++] = r;
	ctx_changed(wh);
}

/* A pop closes the thread's innermost push; an end, its start's id. A
 * range no live block was made in goes, begin and end. */
static void range_close(struct gp_window_head *wh, const struct gp_tw_event *ev, int async)
{
	size_t i = wh->nopen;
	struct wh_range *r;

	while (i-- > 0) {
		r = wh->open[i];
		if (r->async == async && (async ? r->id == ev->id : r->tid == ev->tid))
			break;
	}
	if (i == (size_t)-1)
		return;
	r = wh->open[i];
	memmove(&wh->open[i], &wh->open[i + 1], (wh->nopen - i - 1) * sizeof(wh->open[0]));
	wh->nopen--;
	ctx_changed(wh); /* drops the context of now's hold first */
	if (r->refs > 1)
		r->end = line_new(wh, ev);
	range_unref(wh, r);
}

void gp_wh_observe(void *ctx, const struct gp_tw_event *ev)
{
	struct gp_window_head *wh = ctx;
	int nvtx;

	wh->seq++;
	switch (ev->ph) {
	case 'M':
		keep_static(wh, ev);
		return;
	case 'C':
		keep_counter(wh, ev);
		return;
	case 'B':
	case 'b':
	case 'E':
	case 'e':
	case 'i':
		break;
	default:
		return; /* GPU work, API calls, flows: the window's alone */
	}
	nvtx = ev->cat && !strcmp(ev->cat, GP_CAT_NVTX);
	if (ev->ph != 'i') {
		if (!nvtx)
			return;
		if (ev->ph == 'B' || ev->ph == 'b')
			range_open(wh, ev, ev->ph == 'b');
		else
			range_close(wh, ev, ev->ph == 'e');
		return;
	}
	if (nvtx) {
		nvtx_mark(wh, ev);
		return;
	}
	if (gp_tw_ev_is(ev, GP_EV_TORCH_ALLOC) && ev->has_addr) {
		keep_live(wh, &wh->blocks, ev);
	} else if (gp_tw_ev_is(ev, GP_EV_TORCH_FREE) && ev->has_addr) {
		freed(wh, &wh->blocks, ev->addr);
	} else if (gp_tw_ev_is(ev, GP_EV_ALLOC) && ev->has_addr) {
		keep_live(wh, &wh->allocs, ev);
	} else if (gp_tw_ev_is(ev, GP_EV_FREE) && ev->has_addr) {
		freed(wh, &wh->allocs, ev->addr);
	} else if (gp_tw_ev_is(ev, GP_EV_TORCH_SEGMENT_ALLOC) && ev->has_addr && ev->has_bytes) {
		seg_keep(wh, ev, ev->bytes);
	} else if (gp_tw_ev_is(ev, GP_EV_TORCH_SEGMENT_FREE) && ev->has_addr && ev->has_bytes) {
		seg_free(wh, ev);
	} else if (gp_tw_ev_is(ev, GP_EV_POOL_CREATE) && ev->has_pool) {
		struct wh_line *l = line_new(wh, ev);

		if (l && gp_u64map_put(&wh->pools, ev->pool, l)) {
			wh->left_out++;
			line_unref(wh, l);
		}
	} else if (gp_tw_ev_is(ev, GP_EV_POOL_DESTROY) && ev->has_pool) {
		line_unref(wh, gp_u64map_del(&wh->pools, ev->pool));
	} else if (gp_tw_ev_is(ev, GP_EV_DEVICE) || gp_tw_ev_is(ev, GP_EV_TORCH_ATTACH) ||
		   gp_tw_ev_is(ev, GP_EV_TORCH_STACK)) {
		keep_static(wh, ev);
	} else if (gp_tw_ev_is(ev, GP_EV_ALLOC_CAPTURE)) {
		keep_last(wh, &wh->capture, ev);
	}
}

/* ---- replay ---- */

struct take {
	struct wh_line **v;
	size_t n, cap;
	uint32_t mark;
	int err;
};

static void take(struct take *t, struct wh_line *l)
{
	if (!l || l->mark == t->mark)
		return;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct wh_line **p = realloc(t->v, cap * sizeof(*p));

		if (!p) {
			t->err = -ENOMEM;
			return;
		}
		t->v = p;
		t->cap = cap;
	}
	l->mark = t->mark;
	t->v[t->n++] = l;
}

static void take_range(struct take *t, const struct wh_range *r)
{
	take(t, r->begin);
	take(t, r->end);
}

static void take_live(struct take *t, const struct gp_u64map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		const struct wh_live *b = m->slots[i].val;

		if (!b)
			continue;
		take(t, b->line);
		take(t, b->ctx->step);
		for (uint32_t k = 0; k < b->ctx->n; k++)
			take_range(t, b->ctx->r[k]);
	}
}

static int by_seq(const void *a, const void *b)
{
	const struct wh_line *x = *(struct wh_line *const *)a, *y = *(struct wh_line *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int gp_wh_replay(struct gp_window_head *wh, gp_wh_line_fn fn, void *fn_ctx)
{
	struct take t = { 0 };
	size_t i;
	int r = 0;

	if (++wh->mark == 0)
		++wh->mark; /* 0 is a new line's */
	t.mark = wh->mark;
	for (i = 0; i < wh->nstatics; i++)
		take(&t, wh->statics[i]);
	for (i = 0; i < wh->ncounters; i++)
		take(&t, wh->counters[i].line);
	take(&t, wh->capture);
	take_live(&t, &wh->blocks);
	take_live(&t, &wh->allocs);
	for (i = 0; i < wh->pools.cap; i++)
		take(&t, wh->pools.slots[i].val);
	for (i = 0; i < wh->marks.cap; i++)
		take(&t, wh->marks.slots[i].val);
	for (i = 0; i < wh->nsegs; i++)
		take(&t, wh->segs[i].line);
	for (i = 0; i < wh->nopen; i++)
		take_range(&t, wh->open[i]);
	take(&t, wh->step);
	if (t.err) {
		free(t.v);
		return t.err;
	}
	if (t.n)
		qsort(t.v, t.n, sizeof(t.v[0]), by_seq);
	for (i = 0; i < t.n && !r; i++)
		r = fn(fn_ctx, t.v[i]->text, t.v[i]->len);
	free(t.v);
	return r;
}

void gp_wh_stats(const struct gp_window_head *wh, struct gp_wh_stats *st)
{
	st->lines = wh->lines;
	st->bytes = wh->bytes;
	st->live = wh->blocks.count + wh->allocs.count;
	for (size_t i = 0; i < wh->nsegs; i++)
		st->live += wh->segs[i].bytes != 0;
	st->ranges = wh->nranges;
	st->contexts = wh->nctx;
	st->left_out = wh->left_out;
}

int gp_wh_new(struct gp_window_head **out, size_t max_bytes)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->max_bytes = max_bytes;
	return 0;
}

static void free_live_map(struct gp_window_head *wh, struct gp_u64map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		live_free(wh, m->slots[i].val);
	gp_u64map_free(m);
}

static void free_line_map(struct gp_window_head *wh, struct gp_u64map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		line_unref(wh, m->slots[i].val);
	gp_u64map_free(m);
}

void gp_wh_free(struct gp_window_head *wh)
{
	size_t i;

	if (!wh)
		return;
	ctx_changed(wh);
	free_live_map(wh, &wh->blocks);
	free_live_map(wh, &wh->allocs);
	free_line_map(wh, &wh->pools);
	free_line_map(wh, &wh->marks);
	for (i = 0; i < wh->nstatics; i++)
		line_unref(wh, wh->statics[i]);
	for (i = 0; i < wh->ncounters; i++)
		line_unref(wh, wh->counters[i].line);
	for (i = 0; i < wh->nsegs; i++)
		line_unref(wh, wh->segs[i].line);
	for (i = 0; i < wh->nopen; i++)
		range_unref(wh, wh->open[i]);
	line_unref(wh, wh->step);
	line_unref(wh, wh->capture);
	free(wh->statics);
	free(wh->segs);
	free(wh->open);
	free(wh);
}
