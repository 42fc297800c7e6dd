/* Live-memory counters must come out in timestamp order whatever order the
 * records arrive in, as long as each arrives before its watermark passes. */
#include "mem_counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                                  \
	do {                                                                      \
		if (!(c)) {                                                       \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
			failures++;                                               \
		}                                                                 \
	} while (0)

struct sample {
	uint32_t device;
	uint64_t ts;
	uint64_t totals[GP_MC_COUNT];
};
struct log {
	struct sample *s;
	size_t n, cap;
};

static void record(void *ctx, uint32_t device, uint64_t ts, const uint64_t totals[GP_MC_COUNT])
{
	struct log *l = ctx;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->s = realloc(l->s, l->cap * sizeof(*l->s));
		if (!l->s)
			abort();
	}
	l->s[l->n].device = device;
	l->s[l->n].ts = ts;
	memcpy(l->s[l->n].totals, totals, sizeof(l->s[l->n].totals));
	l->n++;
}

static struct gp_mem_op op(uint8_t type, uint64_t ts, uint64_t addr, uint64_t bytes,
			   uint32_t dev, uint8_t counter)
{
	struct gp_mem_op o = { ts, addr, bytes, dev, type, counter };
	return o;
}

/* The example that motivated the module: a free that arrives before its
 * allocation (another thread's buffer) must not make the sum dip. */
static void test_out_of_order_pair(void)
{
	struct gp_mem_counters *c;
	struct log l = { 0 };
	CHECK(gp_memc_create(&c, 0) == 0);
	struct gp_mem_op f = op(GP_MEMOP_FREE, 200, 0x1000, 64, 0, GP_MC_DEVICE);
	struct gp_mem_op a = op(GP_MEMOP_ALLOC, 100, 0x1000, 64, 0, GP_MC_DEVICE);
	gp_memc_push(c, &f, record, &l);
	gp_memc_push(c, &a, record, &l);
	gp_memc_advance(c, 1000, record, &l);
	CHECK(l.n == 2);
	CHECK(l.s[0].ts == 100 && l.s[0].totals[GP_MC_DEVICE] == 64);
	CHECK(l.s[1].ts == 200 && l.s[1].totals[GP_MC_DEVICE] == 0);
	struct gp_memc_stats st;
	gp_memc_get_stats(c, &st);
	CHECK(st.unmatched_frees == 0 && st.late == 0 && st.live_allocs == 0);
	gp_memc_destroy(c);
	free(l.s);
}

static void test_late_and_watermark(void)
{
	struct gp_mem_counters *c;
	struct log l = { 0 };
	CHECK(gp_memc_create(&c, 0) == 0);
	struct gp_mem_op a = op(GP_MEMOP_ALLOC, 100, 0x2000, 10, 1, GP_MC_MANAGED);
	gp_memc_push(c, &a, record, &l);
	gp_memc_advance(c, 50, record, &l); /* nothing older than 50 */
	CHECK(l.n == 0);
	gp_memc_advance(c, 500, record, &l);
	CHECK(l.n == 1 && l.s[0].device == 1 && l.s[0].totals[GP_MC_MANAGED] == 10);
	/* arrives after its watermark: applied at the watermark, counted late */
	struct gp_mem_op b = op(GP_MEMOP_ALLOC, 300, 0x3000, 5, 1, GP_MC_MANAGED);
	gp_memc_push(c, &b, record, &l);
	gp_memc_advance(c, 1000, record, &l);
	CHECK(l.n == 2 && l.s[1].ts == 500 && l.s[1].totals[GP_MC_MANAGED] == 15);
	struct gp_memc_stats st;
	gp_memc_get_stats(c, &st);
	CHECK(st.late == 1);
	uint64_t t[GP_MC_COUNT];
	gp_memc_totals(c, 1, t);
	CHECK(t[GP_MC_MANAGED] == 15 && t[GP_MC_DEVICE] == 0);
	gp_memc_destroy(c);
	free(l.s);
}

static void test_pools_and_kinds(void)
{
	struct gp_mem_counters *c;
	struct log l = { 0 };
	CHECK(gp_memc_create(&c, 0) == 0);
	struct gp_mem_op ops[] = {
		op(GP_MEMOP_POOL_SIZE, 10, 0xA000, 1 << 20, 0, GP_MC_POOL_RESERVED),
		op(GP_MEMOP_ALLOC, 10, 0xA100, 4096, 0, GP_MC_DEVICE),
		op(GP_MEMOP_POOL_SIZE, 20, 0xA000, 4 << 20, 0, GP_MC_POOL_RESERVED),
		op(GP_MEMOP_POOL_SIZE, 20, 0xB000, 2 << 20, 0, GP_MC_POOL_RESERVED),
		op(GP_MEMOP_ALLOC, 30, 0xC000, 7, 0, GP_MC_PINNED_HOST),
		op(GP_MEMOP_ALLOC, 30, 0xD000, 9, 0, GP_MC_NONE),
		op(GP_MEMOP_FREE, 40, 0xD000, 9, 0, GP_MC_NONE),
		op(GP_MEMOP_FREE, 40, 0xEEEE, 9, 0, GP_MC_DEVICE),
		op(GP_MEMOP_POOL_SIZE, 50, 0xB000, 0, 0, GP_MC_POOL_RESERVED),
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		gp_memc_push(c, &ops[i], record, &l);
	gp_memc_advance(c, UINT64_MAX, record, &l);
	/* one sample per distinct ts on the device */
	CHECK(l.n == 5);
	CHECK(l.s[0].ts == 10 && l.s[0].totals[GP_MC_POOL_RESERVED] == 1 << 20 &&
	      l.s[0].totals[GP_MC_DEVICE] == 4096);
	CHECK(l.s[1].ts == 20 && l.s[1].totals[GP_MC_POOL_RESERVED] == 6 << 20);
	CHECK(l.s[2].ts == 30 && l.s[2].totals[GP_MC_PINNED_HOST] == 7);
	CHECK(l.s[4].ts == 50 && l.s[4].totals[GP_MC_POOL_RESERVED] == 4 << 20);
	struct gp_memc_stats st;
	gp_memc_get_stats(c, &st);
	CHECK(st.unmatched_frees == 1);
	CHECK(st.live_allocs == 2);
	gp_memc_destroy(c);
	free(l.s);
}

/* Random workload, delivered in shuffled chunks the way per-thread buffers
 * arrive, checked against a reference computed in ts order. */
static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_random_against_reference(size_t heap_cap)
{
	enum { N = 20000, WINDOW = 1000 };
	struct gp_mem_op *ops = calloc(N, sizeof(*ops));
	uint64_t *live_addr = calloc(N, sizeof(*live_addr));
	uint64_t *live_bytes = calloc(N, sizeof(*live_bytes));
	size_t nlive = 0, n = 0;
	uint64_t next_addr = 0x10000;

	for (uint64_t ts = 1; n < N; ts++) {
		if (nlive && (next_rand() % 3 == 0)) {
			size_t k = next_rand() % nlive;
			ops[n++] = op(GP_MEMOP_FREE, ts, live_addr[k], live_bytes[k], 0, GP_MC_DEVICE);
			live_addr[k] = live_addr[nlive - 1];
			live_bytes[k] = live_bytes[nlive - 1];
			nlive--;
		} else {
			uint64_t b = 1 + next_rand() % 100000;
			live_addr[nlive] = next_addr;
			live_bytes[nlive] = b;
			nlive++;
			ops[n++] = op(GP_MEMOP_ALLOC, ts, next_addr, b, 0, GP_MC_DEVICE);
			next_addr += 0x100;
		}
	}
	/* reference: totals after each ts, in order */
	uint64_t *ref = calloc(N + 2, sizeof(*ref));
	uint64_t total = 0;
	for (size_t i = 0; i < N; i++) {
		total = ops[i].type == GP_MEMOP_ALLOC ? total + ops[i].bytes : total - ops[i].bytes;
		ref[ops[i].ts] = total;
	}

	struct gp_mem_counters *c;
	struct log l = { 0 };
	CHECK(gp_memc_create(&c, heap_cap) == 0);
	/* deliver window by window, each window's records shuffled */
	for (size_t start = 0; start < N; start += WINDOW) {
		size_t end = start + WINDOW < N ? start + WINDOW : N;
		for (size_t i = end - 1; i > start; i--) {
			size_t j = start + next_rand() % (i - start + 1);
			struct gp_mem_op t = ops[i];
			ops[i] = ops[j];
			ops[j] = t;
		}
		for (size_t i = start; i < end; i++)
			CHECK(gp_memc_push(c, &ops[i], record, &l) == 0);
		/* everything up to the window start is in: the previous window */
		gp_memc_advance(c, start ? start : 0, record, &l);
	}
	gp_memc_advance(c, UINT64_MAX, record, &l);
	CHECK(l.n == N);
	int order_ok = 1, value_ok = 1;
	for (size_t i = 0; i < l.n; i++) {
		if (i && l.s[i].ts <= l.s[i - 1].ts)
			order_ok = 0;
		if (l.s[i].ts <= N && l.s[i].totals[GP_MC_DEVICE] != ref[l.s[i].ts])
			value_ok = 0;
	}
	CHECK(order_ok);
	CHECK(value_ok);
	struct gp_memc_stats st;
	gp_memc_get_stats(c, &st);
	CHECK(st.late == 0 && st.unmatched_frees == 0 && st.double_allocs == 0);
	CHECK(st.live_allocs == nlive);
	gp_memc_destroy(c);
	free(l.s);
	free(ops);
	free(live_addr);
	free(live_bytes);
	free(ref);
}

/* With a tiny heap, records are applied early: memory stays bounded, the
 * final totals are still exact, and the early ones are counted. */
static void test_bounded_heap(void)
{
	struct gp_mem_counters *c;
	struct log l = { 0 };
	CHECK(gp_memc_create(&c, 16) == 0);
	for (uint64_t i = 0; i < 1000; i++) {
		struct gp_mem_op a = op(GP_MEMOP_ALLOC, 1 + i, 0x100000 + i * 64, 8, 0, GP_MC_DEVICE);
		CHECK(gp_memc_push(c, &a, record, &l) == 0);
	}
	gp_memc_advance(c, UINT64_MAX, record, &l);
	uint64_t t[GP_MC_COUNT];
	gp_memc_totals(c, 0, t);
	CHECK(t[GP_MC_DEVICE] == 8000);
	struct gp_memc_stats st;
	gp_memc_get_stats(c, &st);
	CHECK(st.forced == 1000 - 16);
	gp_memc_destroy(c);
	free(l.s);
}

int main(void)
{
	test_out_of_order_pair();
	test_late_and_watermark();
	test_pools_and_kinds();
	test_random_against_reference(0);
	test_bounded_heap();
	if (failures) {
		fprintf(stderr, "test_mem_counters: %d check(s) failed\n", failures);
		return 1;
	}
	printf("test_mem_counters: all checks passed\n");
	return 0;
}
