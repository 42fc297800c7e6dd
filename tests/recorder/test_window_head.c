/* The flight recorder's window head (profiler/window_head.c) against a
 * brute-force reading of the same trace.
 *
 * A random program (threads pushing and popping ranges, autograd's async
 * ranges, steps, PyTorch's blocks, CUDA's allocations, segments, counters,
 * tensor names, GPU work) is written through the trace writer with the
 * head as its tap. At cut points the head's replay must be, line for line,
 * what a second reading of every line written so far keeps: the lines that
 * matter at the cut (statics, each counter's last, every live block and
 * allocation with the ranges open in the process and the step when it was
 * made, live segments, the last name of a live address, the ranges open at
 * the cut and the current step), in the order written. Then a long run of
 * steps (a day of a job's allocations, scaled) keeps the head's memory
 * bounded by what is alive. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testutil.h"
#include "torch_marks.h"
#include "gz_ring.h"
#include "trace_format.h"
#include "trace_writer.h"
#include "window_head.h"

/* ---- what the test remembers of each line written ---- */

struct logged {
	char ph;
	char name[96];
	char cat[16];
	int64_t pid, tid;
	uint64_t id, addr, bytes;
	int has_addr;
	char *text;
	size_t len;
};

static struct logged *lg;
static size_t nlog, caplog;
static struct gp_window_head *wh;

static void tap(void *ctx, const struct gp_tw_event *ev)
{
	struct logged *l;

	(void)ctx;
	if (nlog == caplog) {
		caplog = caplog ? caplog * 2 : 4096;
		lg = realloc(lg, caplog * sizeof(*lg));
		CHECK(lg != NULL);
	}
	l = &lg[nlog++];
	memset(l, 0, sizeof(*l));
	l->ph = ev->ph;
	snprintf(l->name, sizeof(l->name), "%.*s", (int)ev->name_len, ev->name);
	snprintf(l->cat, sizeof(l->cat), "%s", ev->cat ? ev->cat : "");
	l->pid = ev->pid;
	l->tid = ev->tid;
	l->id = ev->id;
	l->addr = ev->addr;
	l->bytes = ev->bytes;
	l->has_addr = ev->has_addr;
	l->text = malloc(ev->len);
	memcpy(l->text, ev->line, ev->len);
	l->len = ev->len;
	gp_wh_observe(wh, ev);
}

/* ---- the random program ---- */

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	return tu_rand(&rng);
}
static unsigned pick(unsigned n)
{
	return (unsigned)(next_rand() % n);
}

#define GPU_PID 1000000000
#define NADDR 256
static struct gp_trace_writer *tw;
static int64_t now_ns;
static int live_block[NADDR], live_alloc[NADDR], live_seg[NADDR];
static int depth[4];
static uint64_t async_open[64];
static unsigned nasync;
static uint64_t next_async = 1, step;

static uint64_t block_addr(unsigned i)
{
	return 0x7f0000000000ull + (uint64_t)i * 0x10000;
}
static uint64_t seg_addr(unsigned i)
{
	return 0x7e0000000000ull + (uint64_t)i * 0x200000;
}

static void begin(char ph, const char *name, const char *cat, int64_t pid, int64_t tid)
{
	now_ns += 1000 + pick(5000);
	gp_tw_begin(tw, ph, name, cat, pid, tid, now_ns);
}

static void memory_event(const char *name, int64_t pid, int64_t tid, uint64_t addr, uint64_t bytes)
{
	begin(GP_PH_ALLOC, name, GP_CAT_MEMORY, pid, tid);
	gp_tw_args_begin(tw);
	gp_tw_arg_hex(tw, GP_F_ADDR, addr);
	gp_tw_arg_u64(tw, GP_F_BYTES, bytes);
	gp_tw_arg_u64(tw, GP_F_DEVICE, 0);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
}

static void mark(int64_t tid, const char *text)
{
	begin(GP_PH_NVTX_MARK, text, GP_CAT_NVTX, 1, tid);
	gp_tw_field_str(tw, GP_T_S, "t");
	CHECK_EQ_INT(gp_tw_end(tw), 0);
}

static void one_event(void)
{
	unsigned i = pick(NADDR), t = 1 + pick(3);
	char text[96];

	switch (pick(15)) {
	case 0: /* a push on a host thread */
		snprintf(text, sizeof(text), "fwd:layer.%u", pick(40));
		begin('B', text, GP_CAT_NVTX, 1, t);
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		depth[t]++;
		break;
	case 1:
		if (!depth[t])
			break;
		begin('E', "", GP_CAT_NVTX, 1, t);
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		depth[t]--;
		break;
	case 2: /* autograd's ranges: started on one thread, ended on another */
		if (nasync == 64)
			break;
		snprintf(text, sizeof(text), "bwd:layer.%u", pick(40));
		begin('b', text, GP_CAT_NVTX, 1, 3);
		gp_tw_field_u64(tw, GP_T_ID, next_async);
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		async_open[nasync++] = next_async++;
		break;
	case 3: {
		if (!nasync)
			break;
		unsigned k = pick(nasync);
		begin('e', "bwd:x", GP_CAT_NVTX, 1, 1 + pick(3));
		gp_tw_field_u64(tw, GP_T_ID, async_open[k]);
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		async_open[k] = async_open[--nasync];
		break;
	}
	case 4:
		if (pick(4))
			break;
		snprintf(text, sizeof(text), "step:%llu", (unsigned long long)++step);
		mark(1, text);
		break;
	case 5:
	case 6:
		if (live_block[i]) {
			memory_event(GP_EV_TORCH_FREE, 1, t, block_addr(i), 512);
			live_block[i] = 0;
		} else {
			memory_event(GP_EV_TORCH_ALLOC, 1, t, block_addr(i), 512 * (1 + pick(100)));
			live_block[i] = 1;
		}
		break;
	case 7:
		if (live_alloc[i]) {
			memory_event(GP_EV_FREE, GPU_PID, 0, block_addr(i) + 0x100000000ull, 0);
			live_alloc[i] = 0;
		} else {
			memory_event(GP_EV_ALLOC, GPU_PID, 0, block_addr(i) + 0x100000000ull, 4096);
			live_alloc[i] = 1;
		}
		break;
	case 8:
		if (pick(3))
			break;
		i %= 32;
		memory_event(live_seg[i] ? GP_EV_TORCH_SEGMENT_FREE : GP_EV_TORCH_SEGMENT_ALLOC, GPU_PID, 0,
			     seg_addr(i), 2 << 20);
		live_seg[i] = !live_seg[i];
		break;
	case 9:
		begin(GP_PH_TORCH_MEMORY, pick(2) ? GP_EV_TORCH_MEMORY : GP_EV_GPU_MEMORY, GP_CAT_MEMORY,
		      GPU_PID + pick(2), 0);
		gp_tw_args_begin(tw);
		gp_tw_arg_u64(tw, GP_F_ALLOCATED, next_rand() % 100000);
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		break;
	case 10:
		snprintf(text, sizeof(text), "%s0x%llx 512 layer.%u", GP_TORCH_TENSOR_PREFIX,
			 (unsigned long long)block_addr(i), pick(40));
		mark(t, text);
		break;
	case 11:
		if (pick(20))
			break;
		begin('M', GP_EV_THREAD_NAME, "", 1, t);
		gp_tw_args_begin(tw);
		gp_tw_arg_str(tw, GP_F_NAME, "worker");
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		break;
	default: /* GPU work: never replayed */
		begin('X', "kernel", GP_CAT_KERNEL, GPU_PID, 7);
		gp_tw_dur(tw, 1000);
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		break;
	}
}

/* ---- the brute-force reading ---- */

static int is(const struct logged *l, const char *name)
{
	return !strcmp(l->name, name);
}

/* The line of the range l opened at b closes, if it closes before k
 * (0: not before k). Pushes pair with the innermost open push of their
 * thread, ends with their start's id. */
static size_t range_end(size_t b, size_t k)
{
	int d = 0;

	for (size_t j = b + 1; j < k; j++) {
		const struct logged *l = &lg[j];

		if (lg[b].ph == 'B' && l->tid == lg[b].tid && !strcmp(l->cat, GP_CAT_NVTX)) {
			if (l->ph == 'B')
				d++;
			else if (l->ph == 'E' && d-- == 0)
				return j;
		}
		if (lg[b].ph == 'b' && l->ph == 'e' && l->id == lg[b].id)
			return j;
	}
	return 0;
}

/* freed (or made again) after j, before k */
static int gone(size_t j, size_t k, const char *made, const char *freed_name)
{
	for (size_t m = j + 1; m < k; m++)
		if (lg[m].has_addr && lg[m].addr == lg[j].addr && (is(&lg[m], made) || is(&lg[m], freed_name)))
			return 1;
	return 0;
}

static int addr_freed(uint64_t addr, size_t j, size_t k)
{
	for (size_t m = j + 1; m < k; m++)
		if (lg[m].has_addr && lg[m].addr == addr &&
		    (is(&lg[m], GP_EV_TORCH_FREE) || is(&lg[m], GP_EV_FREE) || is(&lg[m], GP_EV_TORCH_SEGMENT_FREE)))
			return 1;
	return 0;
}

static void keep_context(char *keep, size_t a, size_t k)
{
	for (size_t b = 0; b < a; b++) {
		if (strcmp(lg[b].cat, GP_CAT_NVTX) || (lg[b].ph != 'B' && lg[b].ph != 'b'))
			continue;
		size_t e = range_end(b, k);
		if (e && e < a)
			continue; /* closed before the allocation */
		keep[b] = 1;
		if (e)
			keep[e] = 1;
	}
	for (size_t s = a; s-- > 0;)
		if (!strcmp(lg[s].cat, GP_CAT_NVTX) && !strncmp(lg[s].name, "step:", 5)) {
			keep[s] = 1;
			break;
		}
}

static char *oracle(size_t k)
{
	char *keep = calloc(k ? k : 1, 1);

	for (size_t j = 0; j < k; j++) {
		const struct logged *l = &lg[j];
		int nvtx = !strcmp(l->cat, GP_CAT_NVTX);

		if (l->ph == 'M')
			keep[j] = 1; /* the meta is not: a dump's head carries it */
		if (l->ph == 'C') {
			size_t m;
			for (m = j + 1; m < k; m++)
				if (lg[m].ph == 'C' && lg[m].pid == l->pid && is(&lg[m], l->name))
					break;
			keep[j] = m == k;
		}
		if (!nvtx && l->ph == 'i' && is(l, GP_EV_TORCH_ALLOC) && !gone(j, k, GP_EV_TORCH_ALLOC, GP_EV_TORCH_FREE)) {
			keep[j] = 1;
			keep_context(keep, j, k);
		}
		if (!nvtx && l->ph == 'i' && is(l, GP_EV_ALLOC) && !gone(j, k, GP_EV_ALLOC, GP_EV_FREE)) {
			keep[j] = 1;
			keep_context(keep, j, k);
		}
		if (is(l, GP_EV_TORCH_SEGMENT_ALLOC) && !gone(j, k, GP_EV_TORCH_SEGMENT_ALLOC, GP_EV_TORCH_SEGMENT_FREE))
			keep[j] = 1;
		if (nvtx && l->ph == 'i' && !strncmp(l->name, GP_TORCH_TENSOR_PREFIX, strlen(GP_TORCH_TENSOR_PREFIX))) {
			uint64_t addr = strtoull(l->name + strlen(GP_TORCH_TENSOR_PREFIX), NULL, 16);
			size_t m;
			for (m = j + 1; m < k; m++)
				if (!strcmp(lg[m].cat, GP_CAT_NVTX) && lg[m].ph == 'i' &&
				    !strncmp(lg[m].name, GP_TORCH_TENSOR_PREFIX, strlen(GP_TORCH_TENSOR_PREFIX)) &&
				    strtoull(lg[m].name + strlen(GP_TORCH_TENSOR_PREFIX), NULL, 16) == addr)
					break;
			keep[j] = m == k && !addr_freed(addr, j, k);
		}
		if (nvtx && (l->ph == 'B' || l->ph == 'b') && !range_end(j, k))
			keep[j] = 1; /* open at the cut */
	}
	for (size_t s = k; s-- > 0;)
		if (!strcmp(lg[s].cat, GP_CAT_NVTX) && !strncmp(lg[s].name, "step:", 5)) {
			keep[s] = 1;
			break;
		}
	return keep;
}

struct replayed {
	char **text;
	size_t *len;
	size_t n, cap;
};

static int collect(void *ctx, const char *line, size_t len)
{
	struct replayed *r = ctx;

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 256;
		r->text = realloc(r->text, r->cap * sizeof(*r->text));
		r->len = realloc(r->len, r->cap * sizeof(*r->len));
	}
	r->text[r->n] = malloc(len);
	memcpy(r->text[r->n], line, len);
	r->len[r->n++] = len;
	return 0;
}

static void check_cut(void)
{
	struct replayed r = { 0 };
	char *keep = oracle(nlog);
	size_t n = 0, at = 0;

	CHECK_EQ_INT(gp_wh_replay(wh, collect, &r), 0);
	for (size_t j = 0; j < nlog; j++)
		n += keep[j];
	CHECK_EQ_U64(r.n, n);
	for (size_t j = 0; j < nlog && at < r.n; j++) {
		if (!keep[j])
			continue;
		if (r.len[at] != lg[j].len || memcmp(r.text[at], lg[j].text, lg[j].len)) {
			CHECK_FAILED_("cut at %zu: replayed line %zu is not line %zu: %.*s\n", nlog, at, j,
				      (int)lg[j].len, lg[j].text);
			break;
		}
		at++;
	}
	for (size_t i = 0; i < r.n; i++)
		free(r.text[i]);
	free(r.text);
	free(r.len);
	free(keep);
}

static void test_against_brute_force(void)
{
	struct gp_gz_ring *ring;

	CHECK_EQ_INT(gp_gz_ring_new(&ring, 1 << 20, 1), 0);
	CHECK_EQ_INT(gp_tw_open_ring(&tw, ring), 0);
	CHECK_EQ_INT(gp_wh_new(&wh, 64 << 20), 0);
	gp_tw_set_tap(tw, tap, NULL);
	begin(GP_PH_META, GP_EV_META, GP_CAT_GPUPROF, 1, 0);
	gp_tw_args_begin(tw);
	gp_tw_arg_u64(tw, GP_F_FORMAT, 1);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	for (int cut = 0; cut < 12; cut++) {
		for (int i = 0; i < 700; i++)
			one_event();
		check_cut();
	}
	gp_wh_free(wh);
	gp_tw_close(tw, NULL);
	gp_gz_ring_free(ring);
	for (size_t j = 0; j < nlog; j++)
		free(lg[j].text);
	free(lg);
	lg = NULL;
	nlog = caplog = 0;
}

/* A long job: each step makes 200 blocks inside a layer's range and frees
 * them, one block a step leaks for its first 100 steps, ranges open and
 * close, segments come and go. What the head keeps is what is alive. */
static void test_bounded(void)
{
	struct gp_gz_ring *ring;
	struct gp_wh_stats st;
	uint64_t most = 0;
	char text[64];

	CHECK_EQ_INT(gp_gz_ring_new(&ring, 1 << 20, 1), 0);
	CHECK_EQ_INT(gp_tw_open_ring(&tw, ring), 0);
	CHECK_EQ_INT(gp_wh_new(&wh, 64 << 20), 0);
	gp_tw_set_tap(tw, gp_wh_observe, wh);
	begin(GP_PH_META, GP_EV_META, GP_CAT_GPUPROF, 1, 0);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	for (uint64_t s = 1; s <= 20000; s++) {
		snprintf(text, sizeof(text), "step:%llu", (unsigned long long)s);
		mark(1, text);
		for (unsigned l = 0; l < 4; l++) {
			snprintf(text, sizeof(text), "fwd:layer.%u", l);
			begin('B', text, GP_CAT_NVTX, 1, 1);
			CHECK_EQ_INT(gp_tw_end(tw), 0);
			for (unsigned b = 0; b < 50; b++)
				memory_event(GP_EV_TORCH_ALLOC, 1, 1, block_addr(l * 50 + b), 4096);
			begin('E', "", GP_CAT_NVTX, 1, 1);
			CHECK_EQ_INT(gp_tw_end(tw), 0);
		}
		if (s <= 100)
			memory_event(GP_EV_TORCH_ALLOC, 1, 1, 0x7d0000000000ull + s * 0x1000, 4096);
		for (unsigned b = 0; b < 200; b++)
			memory_event(GP_EV_TORCH_FREE, 1, 1, block_addr(b), 4096);
		memory_event(GP_EV_TORCH_SEGMENT_ALLOC, GPU_PID, 0, seg_addr(s % 8), 2 << 20);
		memory_event(GP_EV_TORCH_SEGMENT_FREE, GPU_PID, 0, seg_addr(s % 8), 2 << 20);
		gp_wh_stats(wh, &st);
		if (st.bytes > most)
			most = st.bytes;
	}
	gp_wh_stats(wh, &st);
	/* the last step and the 100 leaked blocks, each with its step and
	 * its range none of: 1 + 100 * 2 lines (the meta is the dump's head) */
	CHECK_EQ_U64(st.live, 100);
	CHECK_EQ_U64(st.lines, 201);
	CHECK_EQ_U64(st.ranges, 0);
	CHECK_EQ_U64(st.left_out, 0);
	CHECK(most < 200 * 1024); /* 200 live blocks' lines at most, never the run */
	gp_wh_free(wh);
	gp_tw_close(tw, NULL);
	gp_gz_ring_free(ring);
}

int main(void)
{
	test_against_brute_force();
	test_bounded();
	return CHECK_DONE();
}
