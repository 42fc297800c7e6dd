/* Per process and device: live allocations, the numbers memory_summary()
 * shows, and the moments reported later (the peak, the last step boundary,
 * each failed allocation) kept as snapshots, see state.h.
 *
 * What counts as the framework's memory ("fw", the main number):
 *   tensor mode: stream-ordered device allocations (PyTorch's tensors under
 *                cudaMallocAsync); the others (cuBLAS workspaces, ...) are
 *                "other";
 *   native mode with gpuprof's allocator hook: PyTorch's blocks (torch.*
 *                events), inside its segments, which count as reserved
 *                like tensor mode's pools; the cudaMalloc behind each
 *                segment is left out (a first pass finds them, analyze.c),
 *                every other device allocation is "other";
 *   native mode without it: device allocations (PyTorch's segments), less
 *                those found after a first pass to be someone else's;
 *   cuda mode:   all device allocations. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/env_vars.h"
#include "state.h"

/* The pool keys of native mode's segments: a cudaMalloc'd segment is keyed
 * by its address; the pages mapped into expandable segments come and go in
 * ranges that need not match, so they are one sum under a key no segment
 * has (addresses are aligned). */
#define SEG_MAPPED_KEY 1

uint64_t an_other_key(uint64_t addr, int64_t ts)
{
	uint64_t k = addr ^ ((uint64_t)ts * 0x9E3779B97F4A7C15ull);

	return k ? k : 1;
}

static int absurd(struct an_analysis *a)
{
	snprintf(a->err, a->errcap, "the trace's byte counts add up to more than 2^64: not a real trace");
	a->status = GP_AN_BAD_INPUT;
	return -EINVAL;
}

/* Puts pd on the physical GPU of that UUID, the GPU added when first seen:
 * as many GPUs and processes as the traces have. 0 or -ENOMEM. */
static int gpu_join(struct an_analysis *a, struct an_pd *pd, struct an_str *uuid)
{
	struct an_gpu *g;
	size_t i;

	for (i = 0; i < a->ngpus; i++)
		if (a->gpus[i].uuid == uuid)
			break;
	if (i == a->ngpus) {
		if (a->ngpus == a->gpus_cap) {
			size_t cap = a->gpus_cap ? a->gpus_cap * 2 : 8;
			struct an_gpu *grown = realloc(a->gpus, cap * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			a->gpus = grown;
			a->gpus_cap = cap;
		}
		a->gpus[i] = (struct an_gpu){ .uuid = an_str_ref(uuid) };
		a->ngpus++;
	}
	g = &a->gpus[i];
	if (g->npds == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 4;
		struct an_pd **pds = realloc(g->pds, cap * sizeof(*pds));
		uint64_t *by_pd;

		if (!pds)
			return -ENOMEM;
		g->pds = pds;
		by_pd = realloc(g->peak_by_pd, cap * sizeof(*by_pd));
		if (!by_pd)
			return -ENOMEM;
		g->peak_by_pd = by_pd;
		g->cap = cap;
	}
	/* 0 until the GPU's next peak: not there at the earlier ones */
	g->peak_by_pd[g->npds] = 0;
	g->pds[g->npds++] = pd;
	pd->gpu_idx = (int)i;
	return 0;
}

struct an_pd *an_pd_get(struct an_analysis *a, struct an_proc *p, uint32_t device)
{
	struct an_pd *pd = p->pd[device];
	const struct an_devinfo *di;

	if (pd)
		return pd;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->proc = p;
	pd->device = device;
	pd->stride = 1;
	pd->gpu_idx = -1;
	if (a->settings && a->settings->timeline) {
		if (an_tl_init(&pd->tl, PH_N)) {
			free(pd);
			return NULL;
		}
		pd->has_tl = 1;
	}
	di = &p->src->dev[device];
	if (di->uuid && di->uuid->len && gpu_join(a, pd, di->uuid) != 0) {
		an_tl_free(&pd->tl);
		free(pd);
		return NULL;
	}
	p->pd[device] = pd;
	return pd;
}

static void oom_free(struct an_analysis *a, struct an_oom *o)
{
	an_str_unref(&a->st, o->layer);
	an_str_unref(&a->st, o->op);
	an_str_unref(&a->st, o->api);
	an_snap_free(a, &o->snap);
	free(o->segs);
	an_coll_moment_free(a, &o->coll);
}

void an_pd_free(struct an_analysis *a, struct an_pd *pd)
{
	for (size_t i = 0; i < pd->live.cap; i++)
		if (pd->live.slots[i].val)
			an_rec_unref(a, pd->live.slots[i].val);
	gp_u64map_free(&pd->live);
	for (size_t i = 0; i < pd->pools.cap; i++)
		free(pd->pools.slots[i].val);
	gp_u64map_free(&pd->pools);
	gp_u64map_free(&pd->seg_cuda);
	an_snap_free(a, &pd->peak);
	an_snap_free(a, &pd->step_snap);
	an_moments_free(a, pd);
	an_mapped_free(&pd->mapped);
	for (size_t i = 0; i < pd->nooms; i++)
		oom_free(a, &pd->ooms[i]);
	an_str_unref(&a->st, pd->peak_layer);
	an_coll_moment_free(a, &pd->peak_coll);
	an_coll_dev_free(a, &pd->coll);
	an_tl_free(&pd->tl);
	free(pd);
}

static int reserved_now(const struct an_pd *pd, uint64_t *res)
{
	if (an_native_segments(pd->proc)) {
		*res = pd->fw_live;
		return 1;
	}
	*res = pd->pool_sum;
	return pd->has_pool;
}

/* The device total (CATEGORIES.md): what the framework reserved (its
 * segments or pools; where that is not known, or known short of what is
 * live, what is live) and everything else the process allocated. */
uint64_t an_pd_device_live(const struct an_pd *pd)
{
	uint64_t res = 0;

	if (!reserved_now(pd, &res) || res < pd->fw_live)
		res = pd->fw_live;
	return res + pd->other_live;
}

static void total_note(struct an_pd *pd, int64_t ts)
{
	uint64_t total = an_pd_device_live(pd);

	if (total > pd->total_peak) {
		pd->total_peak = total;
		pd->total_peak_ts = ts;
	}
}

static void frag_note(struct an_frag_moment *m, const struct an_proc *p, uint64_t res,
		      uint64_t alloc, int64_t ts)
{
	m->res = res;
	m->alloc = alloc;
	m->ts = ts;
	m->step = an_current_step(p);
	m->phase = an_process_phase(p);
}

static void frag_update(struct an_pd *pd, int64_t ts)
{
	uint64_t res, alloc;

	if (an_native_segments(pd->proc)) {
		if (!pd->has_torch_mem)
			return;
		res = pd->torch_reserved;
		alloc = pd->torch_allocated;
	} else {
		if (!pd->has_pool)
			return;
		res = pd->pool_sum;
		alloc = pd->fw_live;
	}
	pd->frag_known = 1;
	/* the events of the moment reserved grew (the pool's growth and the
	 * allocation it was for) all count: the state after the last of them */
	if (res > pd->frag_peak.res ||
	    (res && res == pd->frag_peak.res && (ts == pd->frag_peak.ts || pd->frag_peak_before_block))) {
		frag_note(&pd->frag_peak, pd->proc, res, alloc, ts);
		/* noted between a new segment and its block: the block's moment
		 * replaces it */
		pd->frag_peak_before_block = pd->segment_awaits_block;
	}
	/* not between a new segment and the block it was made for: reserved
	 * has grown and allocated not yet, for the same allocation */
	if (res > alloc && res - alloc > an_frag_gap(&pd->frag_worst) && !pd->segment_awaits_block)
		frag_note(&pd->frag_worst, pd->proc, res, alloc, ts);
}

/* PyTorch's caching allocator keeps two pools, each of its own segments:
 * blocks of 1 MiB or less come from the small pool's segments of 2 MiB,
 * larger ones from the large pool's (20 MiB, or the block rounded up to
 * 2 MiB past 10 MiB), and a pool's free bytes serve only its own blocks.
 * Expandable segments map pages of 2 MiB (small) or 20 MiB (large): a
 * mapping that is not whole 20 MiB pages is taken as the small pool's. */
#define TORCH_SMALL_BLOCK (1ull << 20)
#define TORCH_SMALL_SEGMENT (2ull << 20)
#define TORCH_LARGE_PAGE (20ull << 20)

static int torch_block_pool(uint64_t bytes)
{
	return bytes > TORCH_SMALL_BLOCK;
}

static int torch_segment_pool(uint64_t bytes, int mapped)
{
	if (mapped)
		return bytes % TORCH_LARGE_PAGE == 0;
	return bytes != TORCH_SMALL_SEGMENT;
}

static void tpool_add(uint64_t *v, int64_t delta)
{
	if (delta < 0 && (uint64_t)-delta > *v)
		*v = 0; /* made before the hook attached: not counted */
	else
		*v += (uint64_t)delta;
}

/* A block of PyTorch's, just handed out. Where a segment was reserved for
 * it while its pool held at least its bytes free, the pool's cache was in
 * pieces too small for it: that segment is fragmentation's. */
static void split_note(struct an_pd *pd, uint64_t block, int64_t ts)
{
	struct an_split *sp = &pd->split;
	int pool = torch_block_pool(block);

	if (pd->segment_awaits_block && pd->seg_new_pool == pool && pd->seg_new_cached >= block) {
		sp->segments++;
		sp->bytes += pd->seg_new_bytes;
		if (pd->seg_new_cached > sp->worst.cached) {
			sp->worst.cached = pd->seg_new_cached;
			sp->worst.block = block;
			sp->worst.segment = pd->seg_new_bytes;
			sp->worst.res = pd->pool_sum;
			sp->worst.alloc = pd->fw_live + block;
			sp->worst.ts = ts;
			sp->worst.step = an_current_step(pd->proc);
			sp->worst.phase = an_process_phase(pd->proc);
		}
	}
	tpool_add(&pd->tpool_allocated[pool], (int64_t)block);
}

/* The timeline's amounts now (timeline.h): what the summary calls
 * allocated and reserved in this mode (build.c, summary_fill). */
static void timeline_note(struct an_pd *pd, int64_t ts)
{
	const struct an_proc *p = pd->proc;
	uint64_t v[TL_N] = { 0 };
	unsigned known = 0;

	if (!pd->has_tl)
		return;
	if (an_native_segments(p)) {
		v[TL_ALLOCATED] = pd->torch_allocated;
		known |= pd->has_torch_mem ? 1u << TL_ALLOCATED : 0;
		v[TL_RESERVED] = pd->fw_live;
		known |= 1u << TL_RESERVED;
	} else {
		v[TL_ALLOCATED] = pd->fw_live;
		known |= 1u << TL_ALLOCATED;
		v[TL_RESERVED] = pd->pool_sum;
		known |= pd->has_pool ? 1u << TL_RESERVED : 0;
	}
	if (p->mode != MODE_CUDA) {
		v[TL_OTHER] = pd->other_live;
		known |= 1u << TL_OTHER;
	}
	v[TL_DEVICE] = an_pd_device_live(pd);
	known |= 1u << TL_DEVICE;
	an_tl_note(&pd->tl, ts, v, known, an_process_phase(p));
}

void an_memory_phase(struct an_analysis *a, struct an_proc *p, int64_t ts)
{
	/* after every range event: nothing to do without a timeline */
	if (!a->settings || !a->settings->timeline)
		return;
	uint8_t phase = an_process_phase(p);

	for (int d = 0; d < AN_MAX_DEVICES; d++) {
		struct an_pd *pd = p->pd[d];

		if (pd && pd->has_tl && pd->tl.started && pd->tl.phase != phase)
			timeline_note(pd, ts);
	}
}

void an_memory_timeline_end(struct an_pd *pd, int64_t ts)
{
	if (pd->has_tl && pd->tl.started && ts > pd->tl.last_ts)
		timeline_note(pd, ts);
}

/* After every change of what a device holds. */
static void memory_changed(struct an_pd *pd, int64_t ts)
{
	frag_update(pd, ts);
	timeline_note(pd, ts);
}

static void gpu_update(struct an_analysis *a, struct an_pd *pd, int64_t ts)
{
	struct an_gpu *g;
	uint64_t sum = 0;

	if (pd->gpu_idx < 0)
		return;
	g = &a->gpus[pd->gpu_idx];
	for (size_t i = 0; i < g->npds; i++)
		sum += an_pd_device_live(g->pds[i]);
	g->live = sum;
	if (sum > g->peak) {
		g->peak = sum;
		g->peak_ts = ts;
		for (size_t i = 0; i < g->npds; i++)
			g->peak_by_pd[i] = an_pd_device_live(g->pds[i]);
	}
}

static int pool_set(struct an_pd *pd, uint64_t pool, uint64_t size, int64_t ts)
{
	uint64_t *cur = gp_u64map_get(&pd->pools, pool);

	if (!cur) {
		if (size == 0)
			return 0;
		cur = calloc(1, sizeof(*cur));
		if (!cur || gp_u64map_put(&pd->pools, pool, cur)) {
			free(cur);
			return -ENOMEM;
		}
	}
	pd->pool_sum = pd->pool_sum - *cur + size;
	*cur = size;
	if (size == 0)
		free(gp_u64map_del(&pd->pools, pool));
	pd->has_pool = 1;
	if (pd->pool_sum > pd->pool_peak) {
		pd->pool_peak = pd->pool_sum;
		pd->pool_peak_ts = ts;
	}
	total_note(pd, ts); /* the device total counts what pools reserve */
	return 0;
}

/* A stream-ordered pool's size, from its records or an allocation's: what
 * tensor mode counts as reserved. Native mode with the hook counts
 * PyTorch's segments instead: a pool there is another library's (NCCL makes
 * one of 32 MiB at its start, nothing ever allocated from it), whose
 * allocations count as other. A pool's record alone (its creation, a trim)
 * changes only a pool the framework allocated from: one it never used
 * holds none of its memory. */
static int fw_pool_set(struct an_proc *p, struct an_pd *pd, uint64_t pool, uint64_t size, int64_t ts,
		       int from_record)
{
	if (an_native_blocks(p))
		return 0;
	if (from_record && !gp_u64map_get(&pd->pools, pool))
		return 0;
	return pool_set(pd, pool, size, ts);
}

uint64_t an_max_live_records(void)
{
	/* GPUPROF_TEST_MAX_LIVE_RECORDS: a lower cap, for the tests only
	 * (tests/analyze/test_run_scale.py), so that a small trace passes it */
	static uint64_t cap;

	if (!cap) { /* read once: it is asked at every allocation */
		const char *env = getenv(GP_ENV_TEST_MAX_LIVE_RECORDS);
		long v = env ? atol(env) : 0;

		cap = v > 0 && (uint64_t)v < AN_MAX_LIVE_RECORDS ? (uint64_t)v : AN_MAX_LIVE_RECORDS;
	}
	return cap;
}

int an_is_fw(const struct an_proc *p, const struct an_rec *r)
{
	if (!(r->flags & R_DEVICE))
		return 0;
	switch (p->mode) {
	case MODE_TENSOR:
		return (r->flags & R_ASYNC) != 0;
	case MODE_NATIVE:
		return p->blocks ? (r->flags & R_TORCH) != 0 : !(r->flags & R_OTHER);
	default:
		return 1;
	}
}

/* Takes the records out of the totals; keeps them for the snapshots that
 * saw them alive. */
static int release(struct an_analysis *a, struct an_proc *p, struct an_pd *pd, struct an_rec *r,
		   int64_t ts, struct an_thread *free_thread)
{
	struct an_thread *at = r->tid ? an_thread_get(p, r->tid) : NULL;
	int err = 0;

	r->flags |= R_FREED;
	/* made in the newest forward, which has ended, no backward begun
	 * since: what autograd saved dies with the forward's output. Alive
	 * into a later forward, it is something else: a cache of keys and
	 * values kept across forwards even under torch.inference_mode() */
	if (r->phase == PH_FORWARD && !p->fwd_open && p->fwd_begin_seq < r->seq &&
	    p->bwd_begin_seq < r->seq)
		r->flags |= R_KEPT_NO_BACKWARD;
	if (r->flags & R_TORCH)
		tpool_add(&pd->tpool_allocated[torch_block_pool(r->bytes)], -(int64_t)r->bytes);
	r->free_ts = ts;
	r->free_step = an_current_step(p);
	r->free_phase = an_current_phase(p, free_thread);
	r->free_fwd_count = p->fwd_count;
	if (an_thread_has_inst(at, r->range_inst))
		r->flags |= R_FREED_IN_RANGE;
	if (r->phase_inst && an_phase_open(p, r->phase_inst))
		r->flags |= R_FREED_IN_PHASE;

	pd->kind_live[r->kind] -= r->bytes;
	a->live_records--;
	if (r->flags & R_DEVICE) {
		/* device_static, pinned_host...: counted per kind, not here */
		pd->live_count--;
		pd->frees++;
	}
	if (r->flags & R_DEVICE) {
		if (an_is_fw(p, r))
			pd->fw_live -= r->bytes;
		else
			pd->other_live -= r->bytes;
		err |= an_snap_keep(&pd->peak, r);
		err |= an_snap_keep(&pd->step_snap, r);
		for (size_t i = 0; i < pd->nooms; i++)
			err |= an_snap_keep(&pd->ooms[i].snap, r);
		err |= an_snap_keep(&pd->mo_snap, r);
		err |= an_snap_keep(&pd->at, r);
		/* what PyTorch released to retry: its cached segments (native
		 * mode: the segments themselves; with the hook, its blocks are
		 * the program's tensors, and its segments are counted apart) */
		if (an_is_fw(p, r) && !an_native_blocks(p)) {
			if (pd->nooms && pd->ooms[pd->nooms - 1].open) {
				pd->ooms[pd->nooms - 1].released += r->bytes;
				r->flags |= R_RELEASED_ON_OOM;
			}
		}
	}
	an_rec_unref(a, r);
	memory_changed(pd, ts);
	total_note(pd, ts);
	gpu_update(a, pd, ts);
	return err ? -ENOMEM : 0;
}

/* The thread that made an allocation or free, and its API: the event's own
 * (recorded by the API callbacks), or its API event's, found by corr. */
static struct an_thread *call_thread(struct an_proc *p, const struct an_ev *ev, int64_t *tid,
				     struct an_str **api)
{
	if (ev->flags & EVF_THREAD) {
		*tid = ev->tid;
		*api = ev->name;
		return an_thread_get(p, ev->tid);
	}
	const struct an_corr_ent *ent = an_source_api(p->src, ev->mem.corr);
	if (!ent)
		return NULL;
	*tid = ent->tid;
	*api = ent->api;
	return an_thread_get(p, ent->tid);
}

/* What follows a failed allocation: the same request failing again (a
 * retry), memory released, an allocation that succeeds. */
static void oom_follow(struct an_oom *o, const struct an_rec *r, int64_t ts)
{
	if (!o->open)
		return;
	if (o->tid && r->tid && o->tid != r->tid)
		return; /* another thread's allocation says nothing about this one */
	if (r->bytes >= o->request) {
		o->recovered = 1;
		o->watch = 0;
		o->past_ts = ts;
	}
	o->open = 0;
}

/* The failing thread did something again (allocated, or failed again) at
 * ts, its ranges as t says: it went on with what it was doing when the
 * range that was innermost at the failure is still open; else it had
 * stopped that (the error reached the code around it). Either way the
 * failure's watch ends. */
static void oom_watch(struct an_pd *pd, const struct an_thread *t, int64_t tid, int64_t ts)
{
	for (size_t i = 0; i < pd->nooms; i++) {
		struct an_oom *o = &pd->ooms[i];

		if (!o->watch || !tid || o->tid != tid)
			continue;
		o->watch = 0;
		if (o->range_inst && an_thread_has_inst(t, o->range_inst)) {
			o->went_on = 1;
			o->past_ts = ts;
		}
	}
}

void an_oom_moment(const struct an_oom *o, struct an_oom_moment *m)
{
	uint64_t held;

	memset(m, 0, sizeof(*m));
	m->has_free = o->has_meminfo || o->torch;
	m->free = o->torch ? o->torch_free : o->free;
	m->total = o->total;
	m->has_reserved = o->reserved_known || o->torch;
	m->reserved = o->torch ? o->torch_reserved : o->reserved;
	m->device = o->total_live;
	/* PyTorch's segments are in the device total (native mode): the cache
	 * it released before giving up is no longer held */
	if (o->torch && o->reserved_known && o->total_live >= o->reserved)
		m->device = o->total_live - o->reserved + o->torch_reserved;
	held = m->device + o->static_live;
	m->has_outside = o->has_meminfo && m->has_free && m->total > m->free + held;
	m->outside = m->has_outside ? m->total - m->free - held : 0;
}

int an_oom_fatal(const struct an_proc *p, const struct an_oom *o)
{
	if (o->recovered || o->went_on)
		return 0;
	/* a later step mark: the program caught it and completed a step */
	return !p->has_steps || o->step == an_current_step(p);
}

uint64_t an_oom_out_fatal(const struct an_pd *pd)
{
	if (!pd->proc->has_steps)
		return pd->oom_out.stopped;
	return pd->oom_out.stopped_step == an_current_step(pd->proc) ? pd->oom_out.stopped_at_step : 0;
}

static int on_alloc(struct an_analysis *a, struct an_proc *p, struct an_pd *pd,
		    const struct an_ev *ev, int64_t ts)
{
	int64_t tid = 0;
	struct an_str *api = NULL;
	struct an_thread *t = call_thread(p, ev, &tid, &api);
	struct an_rec *r, *old;
	uint64_t total;

	if (ev->flags & EVF_TORCH) {
		split_note(pd, ev->mem.bytes, ts);
		pd->segment_awaits_block = 0; /* this is that block */
	} else if (an_native_blocks(p) && p->seg_guess) {
		if (ev->flags & EVF_SEG_CUDA) {
			/* as below, to be claimed by its segment (on_segment) */
			if (gp_u64map_get(&pd->seg_cuda, ev->mem.addr))
				p->guess_failed = 1; /* two at one address */
			return gp_u64map_put(&pd->seg_cuda, ev->mem.addr, SEG_CUDA_MARKED) ? -ENOMEM : 0;
		}
	} else if (an_native_blocks(p) && p->seg_keys.count &&
		   gp_u64map_get(&p->seg_keys, an_other_key(ev->mem.addr, ts))) {
		/* the cudaMalloc of one of PyTorch's segments: its
		 * torch.segment_alloc counts it, its blocks are the allocations */
		return gp_u64map_put(&pd->seg_cuda, ev->mem.addr, (void *)1) ? -ENOMEM : 0;
	}
	old = gp_u64map_del(&pd->live, ev->mem.addr);
	if (old) {
		/* its free was lost (a profiler window, dropped records) */
		p->reused_live++;
		/* release() counts its free, not seen but certain: the counts
		 * add up (made = freed + live at the end) */
		if (release(a, p, pd, old, ts, NULL))
			return -ENOMEM;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ref = 1;
	r->addr = ev->mem.addr;
	r->bytes = ev->mem.bytes;
	r->requested = ev->mem.bytes;
	if (ev->flags & EVF_TORCH) {
		r->flags |= R_TORCH;
		r->requested = ev->mem.requested;
		r->stack = ev->mem.stack <= UINT32_MAX ? (uint32_t)ev->mem.stack : 0;
	}
	r->seq = ++a->seq;
	r->ts = ts;
	r->kind = ev->kind;
	r->step = an_current_step(p);
	r->fwd_count = p->fwd_count;
	r->phase = an_current_phase(p, t);
	r->phase_inst = an_current_phase_inst(p);
	if (ev->kind == K_DEVICE || ev->kind == K_ARRAY)
		r->flags |= R_DEVICE;
	if (ev->flags & EVF_ASYNC)
		r->flags |= R_ASYNC;
	if (!p->seen_fwd)
		r->flags |= R_BEFORE_FWD;
	if (ev->mem.library && ev->mem.library <= p->src->nlibraries) {
		r->library = an_str_ref(p->src->libraries[ev->mem.library - 1]);
		if (api) {
			char both[512];
			int n = snprintf(both, sizeof(both), "%s (%s)", api->s, r->library->s);
			if (n > 0 && (size_t)n < sizeof(both))
				r->api_library = an_str_intern_raw(&a->st, both, (size_t)n);
		}
	}
	if (api) {
		r->tid = tid;
		r->api = an_str_ref(api);
	} else {
		r->flags |= R_NO_API;
		/* a module's globals (device_static) come with no call: not
		 * what the note about missing calls is about */
		if (ev->kind == K_DEVICE || ev->kind == K_ARRAY)
			p->unattributed++;
	}
	if (t) {
		r->layer = an_str_ref(t->layer);
		r->op = an_str_ref(t->op);
		r->range_inst = t->range_inst;
	}
	if (an_native_segments(p) && p->other_keys.count &&
	    gp_u64map_get(&p->other_keys, an_other_key(r->addr, r->ts)))
		r->flags |= R_OTHER;
	else if (p->mode == MODE_TENSOR && (r->flags & R_DEVICE) && !(r->flags & R_ASYNC))
		r->flags |= R_OTHER;
	else if (an_native_blocks(p) && (r->flags & R_DEVICE) && !(r->flags & R_TORCH))
		r->flags |= R_OTHER;
	/* native mode's cudaMalloc calls keep their records whatever the cap:
	 * a segment PyTorch reserves is found by its call's (on_segment),
	 * and they are few (each a segment, or another library's) */
	if (a->live_records >= an_max_live_records() &&
	    !(p->mode == MODE_NATIVE && (r->flags & R_DEVICE) && !(r->flags & R_TORCH))) {
		/* no room for its record: its bytes only (see summed_live) */
		int fw = an_is_fw(p, r);

		r->flags |= R_SUMMARISED;
		pd->summed_live[r->kind][fw] += r->bytes;
		pd->summed_count++;
		p->summarised++;
	} else if (gp_u64map_put(&pd->live, r->addr, r)) {
		an_rec_unref(a, r);
		return -ENOMEM;
	} else {
		a->live_records++;
	}
	/* device allocations live, kept or summarised; device_static,
	 * pinned_host...: counted per kind, not here */
	if (r->flags & R_DEVICE)
		pd->live_count++;
	if (pd->live_count > pd->max_live_count)
		pd->max_live_count = pd->live_count;

	if (__builtin_add_overflow(pd->kind_live[r->kind], r->bytes, &pd->kind_live[r->kind]))
		return absurd(a);
	pd->kind_allocs[r->kind]++;
	if (pd->kind_live[r->kind] > pd->kind_peak[r->kind]) {
		pd->kind_peak[r->kind] = pd->kind_live[r->kind];
		pd->kind_peak_ts[r->kind] = ts;
	}
	if (ev->flags & EVF_POOL_SIZE && fw_pool_set(p, pd, ev->mem.pool, ev->mem.pool_size, ts, 0))
		return -ENOMEM;
	if (r->flags & R_DEVICE) {
		int fw = an_is_fw(p, r);

		if (fw) {
			pd->fw_live += r->bytes;
			pd->fw_allocs++;
		} else {
			pd->other_live += r->bytes;
			pd->other_allocs++;
		}
		if (__builtin_add_overflow(pd->fw_live, pd->other_live, &total) ||
		    __builtin_add_overflow(total, pd->pool_sum, &total))
			return absurd(a);
		if (pd->other_live > pd->other_peak)
			pd->other_peak = pd->other_live;
		total_note(pd, ts);
		if (fw && pd->fw_live > pd->step_max)
			pd->step_max = pd->fw_live;
		if (fw && pd->fw_live > pd->fw_peak) {
			pd->fw_peak = pd->fw_live;
			pd->fw_peak_ts = ts;
			pd->peak_ts = ts;
			pd->peak_step = r->step;
			pd->peak_phase = r->phase;
			pd->peak_other = pd->other_live;
			pd->peak_device = an_pd_device_live(pd);
			pd->peak_static = pd->kind_live[K_DEVICE_STATIC];
			pd->peak_reserved_known = reserved_now(pd, &pd->peak_reserved);
			an_str_unref(&a->st, pd->peak_layer);
			pd->peak_layer = an_str_ref(r->layer);
			an_snap_take(a, &pd->peak);
			an_coll_take(a, pd, &pd->peak_coll, ts);
		}
		if (fw) {
			an_moments_after(a, pd, ts, r->step, r->phase);
			if (pd->nooms)
				oom_follow(&pd->ooms[pd->nooms - 1], r, ts);
		}
		if (pd->nooms)
			oom_watch(pd, t, tid, ts);
	}
	memory_changed(pd, ts);
	gpu_update(a, pd, ts);
	if (r->flags & R_SUMMARISED)
		an_rec_unref(a, r); /* counted: nothing keeps it */
	return 0;
}

/* A free of a summarised allocation (no record: summed_live has its
 * bytes): the free's own size and kind take it out of the totals. 1 when
 * it was one, 0 when nothing summarised can be it. */
static int summed_free(struct an_analysis *a, struct an_proc *p, struct an_pd *pd,
		       const struct an_ev *ev, int64_t ts)
{
	struct an_rec like = { .kind = ev->kind };
	uint64_t *sum;
	int fw;

	if (!pd->summed_count || !ev->mem.bytes || ev->kind >= K_N)
		return 0;
	if (ev->kind == K_DEVICE || ev->kind == K_ARRAY)
		like.flags |= R_DEVICE;
	if (ev->flags & EVF_ASYNC)
		like.flags |= R_ASYNC;
	if (ev->flags & EVF_TORCH)
		like.flags |= R_TORCH;
	/* native mode without the hook tells the framework's from the
	 * allocation's time, which is gone: whichever sum holds it */
	fw = an_is_fw(p, &like);
	if (an_native_segments(p) && (like.flags & R_DEVICE))
		fw = pd->summed_live[ev->kind][1] >= ev->mem.bytes;
	sum = &pd->summed_live[ev->kind][fw];
	if (*sum < ev->mem.bytes)
		return 0;
	*sum -= ev->mem.bytes;
	pd->summed_count--;
	pd->kind_live[ev->kind] -= ev->mem.bytes;
	if (like.flags & R_DEVICE) {
		pd->live_count--;
		pd->frees++;
	}
	if (like.flags & R_DEVICE) {
		if (fw)
			pd->fw_live -= ev->mem.bytes;
		else
			pd->other_live -= ev->mem.bytes;
		if (fw && !an_native_blocks(p) && pd->nooms && pd->ooms[pd->nooms - 1].open)
			pd->ooms[pd->nooms - 1].released += ev->mem.bytes;
	}
	memory_changed(pd, ts);
	total_note(pd, ts);
	gpu_update(a, pd, ts);
	return 1;
}

static int on_free(struct an_analysis *a, struct an_proc *p, struct an_pd *pd,
		   const struct an_ev *ev, int64_t ts)
{
	int64_t tid = 0;
	struct an_str *api = NULL;
	struct an_thread *t = call_thread(p, ev, &tid, &api);
	struct an_rec *r;

	/* a segment's cudaFree: its torch.segment_free counts it */
	if (!(ev->flags & EVF_TORCH) && pd->seg_cuda.count) {
		void *was = gp_u64map_del(&pd->seg_cuda, ev->mem.addr);

		if (was) {
			/* marked, never claimed: pass 1 would have kept it */
			if (p->seg_guess && was == SEG_CUDA_MARKED)
				p->guess_failed = 1;
			return 0;
		}
	}
	r = gp_u64map_del(&pd->live, ev->mem.addr);
	if (ev->flags & EVF_POOL_SIZE && fw_pool_set(p, pd, ev->mem.pool, ev->mem.pool_size, ts, 1))
		return -ENOMEM;
	if (!r) {
		if (!summed_free(a, p, pd, ev, ts))
			p->unmatched_frees++;
		return 0;
	}
	return release(a, p, pd, r, ts, t);
}

/* Makes room for a new incident: the oldest one the program got past
 * inside a library (its retry succeeded, or the thread went on) leaves the
 * list, else the oldest; it stays counted, by outcome. One whose thread
 * has not shown yet whether it went on counts as stopped. What ended the
 * program is the newest, and stays. */
static void oom_leave_out(struct an_analysis *a, struct an_pd *pd)
{
	size_t k = 0;
	struct an_oom *o;

	for (size_t i = 0; i < pd->nooms; i++) {
		if (pd->ooms[i].recovered || pd->ooms[i].went_on) {
			k = i;
			break;
		}
	}
	o = &pd->ooms[k];
	pd->oom_out.count++;
	pd->oom_out.recovered += o->recovered != 0;
	pd->oom_out.raised += o->torch != 0;
	pd->oom_out.released += o->released;
	pd->oom_out.retries += o->retries;
	if (o->recovered || o->went_on) {
		pd->oom_out.went_on += !o->recovered;
		pd->oom_out.past_bytes += o->request;
		pd->oom_out.past_ns += o->past_ts > o->ts ? (uint64_t)(o->past_ts - o->ts) : 0;
	} else {
		pd->oom_out.stopped++;
		if (o->step > pd->oom_out.stopped_step || pd->oom_out.stopped == 1) {
			pd->oom_out.stopped_step = o->step;
			pd->oom_out.stopped_at_step = 0;
		}
		pd->oom_out.stopped_at_step += o->step == pd->oom_out.stopped_step;
	}
	oom_free(a, o);
	memmove(o, o + 1, (pd->nooms - k - 1) * sizeof(*o));
	pd->nooms--;
}

/* PyTorch's word on a failure (torch.oom): it raised OutOfMemoryError. */
static void oom_torch(struct an_oom *o, const struct an_ev *ev)
{
	o->torch = 1;
	o->torch_block = ev->oom.torch.block;
	o->torch_free = ev->oom.free;
	o->torch_allocated = ev->oom.torch.allocated;
	o->torch_reserved = ev->oom.torch.reserved;
	o->recovered = 0;
	o->open = 0; /* the program got the exception: what follows is not a retry */
}

static int on_oom(struct an_analysis *a, struct an_proc *p, struct an_pd *pd,
		  const struct an_ev *ev, int64_t ts)
{
	struct an_thread *t = an_thread_get(p, ev->tid);
	struct an_oom *o, *prev = NULL;

	p->step_began = 1; /* the program was in a step when it ran out */
	if (pd->nooms && pd->ooms[pd->nooms - 1].open)
		prev = &pd->ooms[pd->nooms - 1];
	if (prev && prev->request == ev->oom.requested && prev->tid == ev->tid) {
		/* the cudaMalloc PyTorch tried, and then its OutOfMemoryError:
		 * one incident, PyTorch's */
		if (ev->flags & EVF_TORCH)
			oom_torch(prev, ev);
		else
			prev->retries++;
		return 0;
	}
	if (prev)
		prev->open = 0;
	/* failing again inside the range of an earlier failure: the thread
	 * went on after that one */
	oom_watch(pd, t, ev->tid, ts);
	pd->oom_count++;
	if (pd->nooms == AN_MAX_OOMS)
		oom_leave_out(a, pd);
	o = &pd->ooms[pd->nooms++];
	memset(o, 0, sizeof(*o));
	o->ts = ts;
	o->tid = ev->tid;
	o->step = an_current_step(p);
	o->phase = an_current_phase(p, t);
	o->api = an_str_ref(ev->name);
	if (t) {
		o->layer = an_str_ref(t->layer);
		o->op = an_str_ref(t->op);
	}
	o->request = ev->oom.requested;
	o->has_meminfo = (ev->flags & EVF_MEMINFO) != 0;
	o->free = ev->oom.free;
	o->total = ev->oom.total;
	/* PyTorch's failure has no CUDA result: its record has always shown
	 * PyTorch's reserved bytes there, and still does */
	o->result = ev->flags & EVF_TORCH ? (int64_t)ev->oom.torch.reserved : ev->oom.result;
	o->fw_live = pd->fw_live;
	o->other_live = pd->other_live;
	o->total_live = an_pd_device_live(pd);
	o->static_live = pd->kind_live[K_DEVICE_STATIC];
	o->reserved_known = reserved_now(pd, &o->reserved);
	o->open = 1;
	o->watch = 1;
	o->range_inst = t ? t->range_inst : 0;
	an_snap_take(a, &o->snap);
	if (an_segments_now(pd, &o->segs, &o->nsegs))
		return -ENOMEM;
	an_coll_take(a, pd, &o->coll, ts);
	if (ev->flags & EVF_TORCH)
		oom_torch(o, ev);
	return 0;
}

/* Read in one pass: the segment made at addr claims the cudaMalloc the
 * source marked for it. Pass 1 would have found at addr the newest
 * allocation not yet freed, and pass 2 left it out if it was CUDA's: that
 * must be the one marked, or nothing of CUDA's, else the guess was wrong.
 * live: what is alive at addr here (the marked one is not). */
static int seg_claim(struct an_proc *p, struct an_pd *pd, uint64_t addr, const struct an_rec *live)
{
	void *was = gp_u64map_get(&pd->seg_cuda, addr);

	if (!was) {
		if (live && !(live->flags & R_TORCH))
			p->guess_failed = 1; /* CUDA's, not marked */
		return 0;
	}
	if (was != SEG_CUDA_MARKED || live) {
		/* claimed twice, or beside a live allocation whose order with
		 * the marked one is not kept here */
		p->guess_failed = 1;
		return 0;
	}
	return gp_u64map_put(&pd->seg_cuda, addr, SEG_CUDA_CLAIMED);
}

/* A segment PyTorch's caching allocator reserved or gave back. */
static int on_segment(struct an_proc *p, struct an_pd *pd, const struct an_ev *ev, int64_t ts)
{
	int release = (ev->flags & EVF_RELEASE) != 0;
	uint64_t bytes = ev->segment.bytes;
	uint64_t size = release ? 0 : bytes;
	int pool = torch_segment_pool(bytes, (ev->flags & EVF_MAPPED) != 0);
	int err;

	if (!release) {
		uint64_t res = pd->tpool_reserved[pool], al = pd->tpool_allocated[pool];

		pd->seg_new_pool = pool;
		pd->seg_new_bytes = bytes;
		pd->seg_new_cached = res > al ? res - al : 0;
	}
	tpool_add(&pd->tpool_reserved[pool], release ? -(int64_t)bytes : (int64_t)bytes);
	if (ev->flags & EVF_MAPPED) {
		uint64_t *cur = gp_u64map_get(&pd->pools, SEG_MAPPED_KEY), now = cur ? *cur : 0;

		pd->seg_mapped = 1;
		size = release ? (now > bytes ? now - bytes : 0) : now + bytes;
		err = pool_set(pd, SEG_MAPPED_KEY, size, ts);
		if (!err)
			err = release ? an_mapped_remove(&pd->mapped, ev->segment.addr, bytes)
				      : an_mapped_add(&pd->mapped, ev->segment.addr, bytes);
	} else {
		struct an_rec *r = release ? NULL : gp_u64map_get(&pd->live, ev->segment.addr);

		/* pass 1: the cudaMalloc behind it, for pass 2 to leave out */
		if (r && !(r->flags & R_TORCH) &&
		    gp_u64map_put(&p->seg_found, an_other_key(r->addr, r->ts), (void *)1))
			return -ENOMEM;
		if (p->seg_guess && !release && seg_claim(p, pd, ev->segment.addr, r))
			return -ENOMEM;
		/* a cached segment PyTorch gave back while a failure is open:
		 * released to retry it */
		if (release && pd->nooms && pd->ooms[pd->nooms - 1].open)
			pd->ooms[pd->nooms - 1].released += bytes;
		/* a segment of the size that failed: PyTorch's retry got it */
		if (!release && pd->nooms && pd->ooms[pd->nooms - 1].open &&
		    bytes >= pd->ooms[pd->nooms - 1].request) {
			struct an_oom *o = &pd->ooms[pd->nooms - 1];

			o->recovered = 1;
			o->watch = 0;
			o->past_ts = ts;
		}
		err = pool_set(pd, ev->segment.addr, size, ts);
	}
	if (err)
		return err;
	/* a new segment comes just before the block it was made for: until
	 * that block, the gap is not fragmentation (frag_update) */
	if (!release)
		pd->segment_awaits_block = 1;
	memory_changed(pd, ts);
	total_note(pd, ts);
	return 0;
}

/* pd: NULL for a device that held nothing then (an_memory_event) */
static void on_attach(struct an_proc *p, struct an_pd *pd, const struct an_ev *ev)
{
	if (ev->flags & EVF_STACKS)
		p->hook_stacks = 1;
	if (!pd)
		return;
	pd->attached = 1;
	pd->attach_allocated = ev->attach.allocated;
	pd->attach_reserved = ev->attach.reserved;
}

int an_memory_name_tensor(struct an_analysis *a, struct an_proc *p, uint64_t addr, uint64_t nbytes,
			  const char *layer, size_t len, int param)
{
	for (int d = 0; d < AN_MAX_DEVICES; d++) {
		struct an_pd *pd = p->pd[d];
		struct an_rec *r = pd ? gp_u64map_get(&pd->live, addr) : NULL;
		struct an_str *name;

		/* a tensor of its own: a view's storage, or one of a flat
		 * parameter's many, is not named after one of them */
		if (!r || !(r->flags & (R_TORCH | R_ASYNC)) || r->requested != nbytes)
			continue;
		name = an_str_intern(&a->st, layer, len);
		if (!name)
			return -ENOMEM;
		an_str_unref(&a->st, r->layer);
		r->layer = name;
		r->flags |= R_NAMED | (param ? R_PARAM : 0);
		return 0;
	}
	return 0;
}

static int is_static_kind(uint8_t kind)
{
	return kind == K_DEVICE_STATIC || kind == K_MANAGED_STATIC;
}

uint64_t an_statics_only_devices(const struct an_proc *p, uint64_t *used)
{
	uint64_t only = 0;

	*used = 0;
	for (int d = 0; d < AN_MAX_DEVICES; d++) {
		const struct an_pd *pd = p->pd[d];
		int other = 0, statics = 0;

		if (!pd)
			continue;
		for (int k = 0; k < K_N; k++) {
			if (is_static_kind((uint8_t)k))
				statics |= pd->kind_allocs[k] != 0;
			else
				other |= pd->kind_allocs[k] != 0;
		}
		other |= pd->has_pool || pd->has_torch_mem || pd->oom_count || pd->attached;
		if (other)
			*used |= 1ull << d;
		else if (statics)
			only |= 1ull << d;
	}
	return only;
}

int an_memory_event(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev, int64_t ts)
{
	struct an_pd *pd;
	struct an_ev moved;

	if (an_ev_from_hook(ev))
		p->saw_blocks = 1;
	/* an older trace's module globals, on the device that loaded them */
	if ((ev->type == AE_ALLOC || ev->type == AE_FREE) && is_static_kind(ev->kind) &&
	    ev->device < AN_MAX_DEVICES && ((p->statics_from >> ev->device) & 1)) {
		moved = *ev;
		moved.device = p->statics_to;
		ev = &moved;
	}

	/* The hook watched a device that held nothing: the process's fact,
	 * not a device it used (older traces have one for every device of
	 * the host; newer ones for the devices it allocated on). */
	if (ev->type == AE_ATTACH && !ev->attach.allocated && !ev->attach.reserved &&
	    !p->pd[ev->device]) {
		on_attach(p, NULL, ev);
		return 0;
	}
	pd = an_pd_get(a, p, ev->device);

	if (!pd)
		return -ENOMEM;
	switch (ev->type) {
	case AE_ALLOC:
	case AE_FREE: {
		int rc;

		if (an_moments_before(a, pd, ts))
			return -ENOMEM;
		rc = ev->type == AE_ALLOC ? on_alloc(a, p, pd, ev, ts) : on_free(a, p, pd, ev, ts);
		if (!rc)
			an_moments_event(a, pd, ts);
		return rc;
	}
	case AE_POOL:
		if (fw_pool_set(p, pd, ev->pool.pool, ev->pool.size, ts, 1))
			return -ENOMEM;
		memory_changed(pd, ts);
		return 0;
	case AE_OOM:
		return on_oom(a, p, pd, ev, ts);
	case AE_SEGMENT:
		if (an_moments_segments(pd) || on_segment(p, pd, ev, ts))
			return -ENOMEM;
		gpu_update(a, pd, ts);
		return 0;
	case AE_ATTACH:
		on_attach(p, pd, ev);
		return 0;
	default:
		return 0;
	}
}

static void series_add(struct an_pd *pd, uint32_t step, int64_t ts)
{
	struct an_step_pt *pt = an_series_mark(pd->series, &pd->nseries, &pd->stride, &pd->marks_seen);

	if (!pt)
		return;
	pt->step = step;
	pt->ts = ts;
	pt->fw = pd->fw_live;
	pt->total = pd->fw_live + pd->other_live;
	pt->reserved_known = reserved_now(pd, &pt->reserved);
	pt->peak = pd->step_max; /* never below fw_live: raised with it in on_alloc */
	pd->step_max = pd->fw_live;
}

int an_memory_step(struct an_analysis *a, struct an_proc *p, int64_t ts)
{
	uint32_t step = p->last_step > UINT32_MAX ? UINT32_MAX : (uint32_t)p->last_step;

	for (int d = 0; d < AN_MAX_DEVICES; d++) {
		struct an_pd *pd = p->pd[d];

		if (!pd)
			continue;
		series_add(pd, step, ts);
		timeline_note(pd, ts); /* a phase may end here */
		an_snap_take(a, &pd->step_snap);
		pd->step_snap_step = step;
	}
	return 0;
}

void an_memory_use_outline(struct an_pd *pd, const struct an_outline_dev *od)
{
	memcpy(pd->series, od->pts, od->npts * sizeof(od->pts[0]));
	pd->nseries = od->npts;
	pd->stride = od->stride;
	pd->marks_seen = od->steps;
}

/* PyTorch's own allocated and reserved bytes at ts, sampled or from its
 * history. */
static void torch_counts(struct an_pd *pd, uint64_t allocated, uint64_t reserved, int64_t ts)
{
	pd->has_torch_mem = 1;
	pd->torch_allocated = allocated;
	pd->torch_reserved = reserved;
	if (allocated > pd->torch_allocated_peak) {
		pd->torch_allocated_peak = allocated;
		pd->torch_allocated_peak_ts = ts;
	}
	memory_changed(pd, ts);
}

void an_memory_torch_mem(struct an_analysis *a, struct an_proc *p, uint32_t device,
			 uint64_t allocated, uint64_t reserved, int64_t ts)
{
	const struct an_history *h = &p->src->hist;
	struct an_pd *pd;

	/* samples are only needed where PyTorch's own history is not */
	if ((h->devices & (1ull << device)) && ts >= p->src->ts_base_ns + h->first_ts[device])
		return;
	/* nothing on a device the process has not used: not a use of it */
	if (!allocated && !reserved && !p->pd[device])
		return;
	pd = an_pd_get(a, p, device);
	if (pd)
		torch_counts(pd, allocated, reserved, ts);
}

int an_memory_torch_hist(struct an_analysis *a, struct an_proc *p, uint32_t device,
			 uint64_t allocated, uint64_t reserved, int64_t ts)
{
	struct an_pd *pd = an_pd_get(a, p, device);

	if (!pd)
		return -ENOMEM;
	pd->torch_hist = 1;
	torch_counts(pd, allocated, reserved, ts);
	return 0;
}
