#include "mem_counters.h"

#include "trace_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const gp_mc_names[GP_MC_COUNT] = {
	GP_F_DEVICE, GP_F_DEVICE_STATIC, GP_F_MANAGED, GP_F_PINNED_HOST, GP_F_POOL_RESERVED,
};

#define MAX_DEVICES 64

struct pending {
	struct gp_mem_op op;
	uint64_t seq; /* arrival order: ties on ts keep it */
};

struct live_slot {
	uint64_t addr; /* 0 = empty; a tombstone is addr 1 (never a real allocation) */
	uint64_t bytes;
	uint32_t device;
	uint8_t counter;
};
#define TOMBSTONE 1u

struct pool_slot {
	uint64_t addr;
	uint64_t size;
	uint32_t device;
};

struct gp_mem_counters {
	struct pending *heap;
	size_t heap_len, heap_cap; /* cap: the bound; alloc: what is allocated */
	size_t heap_alloc;
	uint64_t next_seq;
	uint64_t watermark; /* everything older has been applied */

	struct live_slot *live;
	size_t live_cap, live_used; /* used counts tombstones too */
	size_t live_count;

	struct pool_slot *pools; /* few pools: a linear array is enough */
	size_t npools, pools_cap;

	uint64_t totals[MAX_DEVICES][GP_MC_COUNT];
	struct gp_memc_stats st;
};

static int before(const struct pending *a, const struct pending *b)
{
	if (a->op.ts != b->op.ts)
		return a->op.ts < b->op.ts;
	return a->seq < b->seq;
}

static void heap_up(struct pending *h, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&h[i], &h[p]))
			break;
		struct pending t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

static void heap_down(struct pending *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (r < n && before(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		struct pending t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static uint64_t hash_addr(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return a;
}

static int live_grow(struct gp_mem_counters *c)
{
	size_t ncap = c->live_cap ? c->live_cap * 2 : 4096;
	/* Rehash also clears tombstones, so only grow when live entries need it. */
	if (c->live_count * 2 < c->live_cap)
		ncap = c->live_cap;
	struct live_slot *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < c->live_cap; i++) {
		struct live_slot *s = &c->live[i];
		if (s->addr == 0 || s->addr == TOMBSTONE)
			continue;
		size_t j = hash_addr(s->addr) & (ncap - 1);
		while (n[j].addr)
			j = (j + 1) & (ncap - 1);
		n[j] = *s;
	}
	free(c->live);
	c->live = n;
	c->live_cap = ncap;
	c->live_used = c->live_count;
	return 0;
}

/* Returns the slot holding addr, or NULL. */
static struct live_slot *live_find(struct gp_mem_counters *c, uint64_t addr)
{
	if (!c->live_cap)
		return NULL;
	size_t j = hash_addr(addr) & (c->live_cap - 1);
	while (c->live[j].addr) {
		if (c->live[j].addr == addr)
			return &c->live[j];
		j = (j + 1) & (c->live_cap - 1);
	}
	return NULL;
}

static int live_insert(struct gp_mem_counters *c, const struct live_slot *v)
{
	if ((c->live_used + 1) * 4 >= c->live_cap * 3) {
		int err = live_grow(c);
		if (err)
			return err;
	}
	size_t j = hash_addr(v->addr) & (c->live_cap - 1);
	while (c->live[j].addr && c->live[j].addr != TOMBSTONE)
		j = (j + 1) & (c->live_cap - 1);
	if (c->live[j].addr == 0)
		c->live_used++;
	c->live[j] = *v;
	c->live_count++;
	return 0;
}

int gp_memc_create(struct gp_mem_counters **out, size_t max_pending)
{
	struct gp_mem_counters *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->heap_cap = max_pending ? max_pending : (1u << 20);
	*out = c;
	return 0;
}

void gp_memc_destroy(struct gp_mem_counters *c)
{
	if (!c)
		return;
	free(c->heap);
	free(c->live);
	free(c->pools);
	free(c);
}

static void sub_sat(uint64_t *v, uint64_t d)
{
	*v = *v > d ? *v - d : 0;
}

static void apply_pool_size(struct gp_mem_counters *c, const struct gp_mem_op *op)
{
	uint64_t *tot = c->totals[op->device];
	for (size_t i = 0; i < c->npools; i++) {
		struct pool_slot *p = &c->pools[i];
		if (p->addr == op->addr && p->device == op->device) {
			sub_sat(&tot[GP_MC_POOL_RESERVED], p->size);
			p->size = op->bytes;
			tot[GP_MC_POOL_RESERVED] += p->size;
			return;
		}
	}
	if (c->npools == c->pools_cap) {
		size_t ncap = c->pools_cap ? c->pools_cap * 2 : 8;
		struct pool_slot *n = realloc(c->pools, ncap * sizeof(*n));
		if (!n)
			return; /* pool size is then unknown; allocations still count */
		c->pools = n;
		c->pools_cap = ncap;
	}
	c->pools[c->npools++] = (struct pool_slot){ op->addr, op->bytes, op->device };
	tot[GP_MC_POOL_RESERVED] += op->bytes;
}

static void apply(struct gp_mem_counters *c, const struct gp_mem_op *op)
{
	c->st.applied++;
	if (op->device >= MAX_DEVICES)
		return;
	uint64_t *tot = c->totals[op->device];
	struct live_slot *s;

	switch (op->type) {
	case GP_MEMOP_ALLOC:
		s = live_find(c, op->addr);
		if (s) {
			c->st.double_allocs++;
			if (s->counter < GP_MC_COUNT)
				sub_sat(&c->totals[s->device][s->counter], s->bytes);
			s->bytes = op->bytes;
			s->device = op->device;
			s->counter = op->counter;
		} else {
			struct live_slot v = { op->addr, op->bytes, op->device, op->counter };
			if (op->addr <= TOMBSTONE || live_insert(c, &v) != 0)
				return; /* cannot track it: leave totals alone so they stay balanced */
		}
		if (op->counter < GP_MC_COUNT)
			tot[op->counter] += op->bytes;
		break;
	case GP_MEMOP_FREE:
		s = live_find(c, op->addr);
		if (!s) {
			c->st.unmatched_frees++;
			return;
		}
		/* The size and kind of the allocation win over the free record's. */
		if (s->counter < GP_MC_COUNT)
			sub_sat(&c->totals[s->device][s->counter], s->bytes);
		s->addr = TOMBSTONE;
		c->live_count--;
		break;
	case GP_MEMOP_POOL_SIZE:
		apply_pool_size(c, op);
		break;
	}
}

static void pop_apply_one(struct gp_mem_counters *c, gp_memc_emit_fn emit, void *ctx)
{
	struct pending top = c->heap[0];
	c->heap[0] = c->heap[--c->heap_len];
	heap_down(c->heap, c->heap_len, 0);
	apply(c, &top.op);
	/* One counter sample per (device, ts): skip it while the next record
	 * continues the same group. */
	if (c->heap_len && c->heap[0].op.ts == top.op.ts &&
	    c->heap[0].op.device == top.op.device)
		return;
	if (emit && top.op.device < MAX_DEVICES)
		emit(ctx, top.op.device, top.op.ts, c->totals[top.op.device]);
}

int gp_memc_push(struct gp_mem_counters *c, const struct gp_mem_op *op,
		 gp_memc_emit_fn emit, void *ctx)
{
	struct pending p = { *op, c->next_seq++ };
	if (p.op.ts < c->watermark) {
		c->st.late++;
		p.op.ts = c->watermark;
	}
	if (c->heap_len == c->heap_cap) {
		/* Applying the oldest early keeps memory bounded; it is only
		 * wrong if an even older record is still to come. */
		c->st.forced++;
		if (c->heap[0].op.ts > c->watermark)
			c->watermark = c->heap[0].op.ts;
		pop_apply_one(c, emit, ctx);
		if (p.op.ts < c->watermark) {
			c->st.late++;
			p.op.ts = c->watermark;
		}
	}
	if (c->heap_len == c->heap_alloc) {
		size_t n = c->heap_alloc ? c->heap_alloc * 2 : 4096;
		if (n > c->heap_cap)
			n = c->heap_cap;
		struct pending *h = realloc(c->heap, n * sizeof(*h));
		if (!h)
			return -ENOMEM;
		c->heap = h;
		c->heap_alloc = n;
	}
	c->heap[c->heap_len] = p;
	heap_up(c->heap, c->heap_len);
	c->heap_len++;
	return 0;
}

void gp_memc_advance(struct gp_mem_counters *c, uint64_t watermark,
		     gp_memc_emit_fn emit, void *ctx)
{
	while (c->heap_len && c->heap[0].op.ts < watermark)
		pop_apply_one(c, emit, ctx);
	if (watermark > c->watermark)
		c->watermark = watermark;
}

void gp_memc_get_stats(const struct gp_mem_counters *c, struct gp_memc_stats *st)
{
	*st = c->st;
	st->live_allocs = c->live_count;
}

void gp_memc_totals(const struct gp_mem_counters *c, uint32_t device,
		    uint64_t totals[GP_MC_COUNT])
{
	if (device >= MAX_DEVICES) {
		memset(totals, 0, GP_MC_COUNT * sizeof(uint64_t));
		return;
	}
	memcpy(totals, c->totals[device], GP_MC_COUNT * sizeof(uint64_t));
}
