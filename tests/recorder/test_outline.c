/* The flight recorder's outline (profiler/outline.c) against what a job
 * written here knows of itself.
 *
 * A training job is written through the trace writer with the outline as
 * its tap, as PyTorch's hooks and allocator write it: parameters before the
 * first forward, module ranges on the main thread (fwd:<Net>, fwd:fcK),
 * autograd's bwd: ranges on its own thread under phase:backward, the
 * optimizer's phase, step marks, temporaries freed inside the range that
 * made them, a leak of one block a step in fc2, segments, CUDA's own
 * allocations, a failed allocation, a parameter renamed by a tensor mark.
 * The job keeps the truth: every block's category and layer, allocated
 * after each event. Each step's record must hold its exact peaks, the
 * first moment allocated reached its most, the bytes alive then by
 * category and by layer, the values at the step's mark. Then the equivalent
 * of a day of steps keeps the outline's memory bounded by what is alive. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gz_ring.h"
#include "outline.h"
#include "testutil.h"
#include "torch_marks.h"
#include "trace_format.h"
#include "trace_writer.h"

#define MAX_BLOCKS 4096
#define LAYERS 4

enum { C_PARAM, C_GRAD, C_OPT, C_ACT, C_TEMP, C_INPUT, C_OTHER };

struct truth_block {
	uint64_t addr, bytes;
	int cat, layer; /* layer -1: none */
	int live;
};

static struct gp_trace_writer *tw;
static struct gp_outline *ol;
static struct truth_block blocks[MAX_BLOCKS];
static size_t nblocks;
static int64_t now_ns = 1000000000;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_addr = 0x7f0000000000ull;

/* the truth of the step in progress */
static uint64_t allocated, allocated_peak, reserved, reserved_peak, device_bytes, device_peak, ooms, oom_bytes;
static int64_t peak_ns, begin_ns;
static uint64_t at_peak_cat[7], at_peak_layer[LAYERS + 1];
static int peak_fresh; /* at_peak_* is the state now */
static int forward_seen; /* parameters are parameters once a forward ran */

static const char *layer_name(int l)
{
	static const char *const names[LAYERS] = { "<Net>.fc1", "<Net>.fc2", "<Net>.fc3", "<Net>.fc4" };

	return l < 0 ? "(no layer)" : names[l];
}

static unsigned pick(unsigned n)
{
	return (unsigned)(tu_rand(&rng) % n);
}

static void begin(char ph, const char *name, const char *cat, int64_t tid)
{
	now_ns += 2000 + pick(3000);
	gp_tw_begin(tw, ph, name, cat, 1, tid, now_ns);
}

static void end_ev(void)
{
	CHECK_EQ_INT(gp_tw_end(tw), 0);
}

static void push(int64_t tid, const char *name)
{
	begin('B', name, GP_CAT_NVTX, tid);
	end_ev();
}

static void pop(int64_t tid)
{
	begin('E', "", GP_CAT_NVTX, tid);
	end_ev();
}

static void mark(int64_t tid, const char *text)
{
	begin(GP_PH_NVTX_MARK, text, GP_CAT_NVTX, tid);
	gp_tw_field_str(tw, GP_T_S, "t");
	end_ev();
}

static void bwd_start(const char *name, uint64_t id)
{
	begin('b', name, GP_CAT_NVTX, 2);
	gp_tw_field_u64(tw, GP_T_ID, id);
	end_ev();
}

static void bwd_end(uint64_t id)
{
	begin('e', "", GP_CAT_NVTX, 2);
	gp_tw_field_u64(tw, GP_T_ID, id);
	end_ev();
}

/* The truth at a new most: what is alive now */
static void truth_peak(void)
{
	memset(at_peak_cat, 0, sizeof(at_peak_cat));
	memset(at_peak_layer, 0, sizeof(at_peak_layer));
	for (size_t i = 0; i < nblocks; i++) {
		if (!blocks[i].live)
			continue;
		at_peak_cat[blocks[i].cat] += blocks[i].bytes;
		at_peak_layer[blocks[i].layer + 1] += blocks[i].bytes;
	}
}

static size_t alloc_block(int64_t tid, uint64_t bytes, int cat, int layer)
{
	size_t i = nblocks++;

	CHECK(nblocks <= MAX_BLOCKS);
	blocks[i] = (struct truth_block){ next_addr, bytes, cat, layer, 1 };
	next_addr += 0x100000;
	begin(GP_PH_TORCH_ALLOC, GP_EV_TORCH_ALLOC, GP_CAT_MEMORY, tid);
	gp_tw_args_begin(tw);
	gp_tw_arg_hex(tw, GP_F_ADDR, blocks[i].addr);
	gp_tw_arg_u64(tw, GP_F_BYTES, bytes);
	gp_tw_arg_u64(tw, GP_F_DEVICE, 0);
	end_ev();
	allocated += bytes;
	if (allocated > allocated_peak) {
		allocated_peak = allocated;
		peak_ns = now_ns;
		peak_fresh = 1;
	}
	return i;
}

static void free_block(int64_t tid, size_t i)
{
	CHECK(blocks[i].live);
	if (peak_fresh) {
		truth_peak();
		peak_fresh = 0;
	}
	begin(GP_PH_TORCH_FREE, GP_EV_TORCH_FREE, GP_CAT_MEMORY, tid);
	gp_tw_args_begin(tw);
	gp_tw_arg_hex(tw, GP_F_ADDR, blocks[i].addr);
	gp_tw_arg_u64(tw, GP_F_BYTES, blocks[i].bytes);
	gp_tw_arg_u64(tw, GP_F_DEVICE, 0);
	end_ev();
	blocks[i].live = 0;
	allocated -= blocks[i].bytes;
}

/* A temporary: made and freed inside the range open now */
static void temporary(int64_t tid, int layer)
{
	size_t i = alloc_block(tid, 4096 * (1 + pick(64)), C_TEMP, layer);

	free_block(tid, i);
}

static void segment(int alloc, uint64_t addr, uint64_t bytes)
{
	begin(GP_PH_ALLOC, alloc ? GP_EV_TORCH_SEGMENT_ALLOC : GP_EV_TORCH_SEGMENT_FREE, GP_CAT_MEMORY, 0);
	gp_tw_args_begin(tw);
	gp_tw_arg_hex(tw, GP_F_ADDR, addr);
	gp_tw_arg_u64(tw, GP_F_BYTES, bytes);
	gp_tw_arg_u64(tw, GP_F_DEVICE, 0);
	end_ev();
	if (alloc) {
		reserved += bytes;
		reserved_peak = reserved > reserved_peak ? reserved : reserved_peak;
	} else {
		reserved -= bytes;
	}
}

static void cuda_alloc(int alloc, uint64_t addr, uint64_t bytes, const char *kind)
{
	begin(GP_PH_ALLOC, alloc ? GP_EV_ALLOC : GP_EV_FREE, GP_CAT_MEMORY, 0);
	gp_tw_args_begin(tw);
	gp_tw_arg_hex(tw, GP_F_ADDR, addr);
	gp_tw_arg_u64(tw, GP_F_BYTES, bytes);
	gp_tw_arg_str(tw, GP_F_KIND, kind);
	gp_tw_arg_u64(tw, GP_F_DEVICE, 0);
	gp_tw_arg_bool(tw, GP_F_ASYNC, 0);
	end_ev();
	if (strcmp(kind, GP_KIND_DEVICE))
		return;
	if (alloc) {
		device_bytes += bytes;
		device_peak = device_bytes > device_peak ? device_bytes : device_peak;
	} else {
		device_bytes -= bytes;
	}
}

static void oom(uint64_t bytes)
{
	begin(GP_PH_TORCH_OOM, GP_EV_TORCH_OOM, GP_CAT_MEMORY, 1);
	gp_tw_args_begin(tw);
	gp_tw_arg_u64(tw, GP_F_BYTES, bytes);
	gp_tw_arg_u64(tw, GP_F_DEVICE, 0);
	end_ev();
	ooms++;
	oom_bytes = bytes > oom_bytes ? bytes : oom_bytes;
}

static void stretch_begins(void)
{
	allocated_peak = allocated;
	reserved_peak = reserved;
	device_peak = device_bytes;
	peak_ns = now_ns;
	ooms = oom_bytes = 0;
	begin_ns = now_ns;
	peak_fresh = 1;
}

static uint64_t holder(const struct gp_outline_holder *h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(h[i].name, name))
			return h[i].bytes;
	return 0;
}

/* The outline's record of the stretch that just closed, against the truth. */
static void check_record(int closed_by, uint64_t step)
{
	struct gp_outline_rec r;
	uint64_t sum = 0;

	if (peak_fresh)
		truth_peak();
	CHECK_EQ_INT(gp_outline_next(ol, &r), 1);
	CHECK_EQ_INT(r.closed_by, closed_by);
	CHECK(r.step == step && r.device == 0);
	CHECK(r.begin_ns == begin_ns && r.end_ns == now_ns);
	CHECK(r.allocated_peak == allocated_peak && r.peak_ns == peak_ns);
	CHECK(r.reserved_peak == reserved_peak && r.device_peak == device_peak);
	CHECK(r.allocated == allocated && r.reserved == reserved && r.device_bytes == device_bytes);
	CHECK(r.ooms == ooms && r.oom_bytes == oom_bytes);
	if (!forward_seen) {
		at_peak_cat[C_OTHER] += at_peak_cat[C_PARAM];
		at_peak_cat[C_PARAM] = 0;
	}
	for (int c = 0; c < 7; c++)
		CHECK(holder(r.cat, r.ncat, gp_outline_cat_names[c]) == at_peak_cat[c]);
	for (int l = -1; l < LAYERS; l++)
		CHECK(holder(r.layer, r.nlayer, layer_name(l)) == at_peak_layer[l + 1]);
	for (size_t i = 0; i < r.nlayer; i++)
		sum += r.layer[i].bytes;
	CHECK(sum == allocated_peak);
	for (size_t i = 1; i < r.ncat; i++)
		CHECK(r.cat[i - 1].bytes >= r.cat[i].bytes);
	CHECK_EQ_INT(gp_outline_next(ol, &r), 0);
	stretch_begins();
}

static size_t acts[LAYERS][4];
static size_t grads[LAYERS], states[LAYERS];
static int have_grads, have_states;

static void one_step(uint64_t n, int leak)
{
	char name[64];
	uint64_t id = 1000 * n;

	push(1, "fwd:<Net>");
	forward_seen = 1;
	for (int l = 0; l < LAYERS; l++) {
		snprintf(name, sizeof(name), "fwd:fc%d", l + 1);
		push(1, name);
		temporary(1, l);
		for (int k = 0; k < 4; k++)
			acts[l][k] = alloc_block(1, 65536 * (1 + pick(32)), C_ACT, l);
		temporary(1, l);
		if (leak && l == 1)
			alloc_block(1, 1 << 20, C_ACT, l);
		if (l == LAYERS - 1) {
			/* the step's most, reached twice: the first counts */
			free_block(1, alloc_block(1, 1 << 22, C_TEMP, l));
			free_block(1, alloc_block(1, 1 << 22, C_TEMP, l));
		}
		pop(1);
	}
	pop(1);
	push(1, "phase:backward");
	for (int l = LAYERS; l-- > 0;) {
		snprintf(name, sizeof(name), "bwd:fc%d", l + 1);
		bwd_start(name, ++id);
		temporary(2, l);
		if (!have_grads)
			grads[l] = alloc_block(2, 262144, C_GRAD, l);
		for (int k = 0; k < 4; k++)
			free_block(2, acts[l][k]);
		temporary(2, l);
		bwd_end(id);
	}
	have_grads = 1;
	pop(1);
	push(1, "phase:optimizer.step");
	for (int l = 0; l < LAYERS; l++) {
		if (!have_states)
			states[l] = alloc_block(1, 524288, C_OPT, -1);
		temporary(1, -1);
	}
	have_states = 1;
	pop(1);
	if (n == 7)
		oom(1ull << 40);
	if (n % 5 == 0) {
		segment(1, 0x7e0000000000ull + n * 0x4000000, 2 << 20);
		cuda_alloc(1, 0x7d0000000000ull + n * 0x100000, 8192, GP_KIND_DEVICE);
		cuda_alloc(1, 0x7c0000000000ull + n * 0x100000, 8192, GP_KIND_PINNED_HOST);
	}
	if (n % 5 == 3 && n > 5) {
		segment(0, 0x7e0000000000ull + (n - 3) * 0x4000000, 2 << 20);
		cuda_alloc(0, 0x7d0000000000ull + (n - 3) * 0x100000, 8192, GP_KIND_DEVICE);
	}
	snprintf(name, sizeof(name), "step:%llu", (unsigned long long)n);
	mark(1, name);
}

/* An instant that moves time on (the outline looks at the clock then) */
static void idle(int64_t ns)
{
	now_ns += ns;
	mark(1, "data:wait");
}

static void test_steps(void)
{
	struct gp_gz_ring *ring;
	char text[128];
	size_t p0;

	CHECK_EQ_INT(gp_gz_ring_new(&ring, 64 << 20, 1), 0);
	CHECK_EQ_INT(gp_tw_open_ring(&tw, ring), 0);
	CHECK_EQ_INT(gp_outline_new(&ol), 0);
	gp_tw_set_tap(tw, gp_outline_observe, ol);
	begin('M', GP_EV_THREAD_NAME, "", 1);
	gp_tw_args_begin(tw);
	gp_tw_arg_str(tw, GP_F_NAME, "main");
	end_ev();
	stretch_begins();
	/* the setup, before any forward: parameters, one named by a tensor
	 * mark; then 2.4 s of waiting: two records closed by the second */
	p0 = alloc_block(1, 1 << 20, C_PARAM, -1);
	for (int l = 1; l < LAYERS; l++)
		alloc_block(1, 1 << 20, C_PARAM, -1);
	snprintf(text, sizeof(text), "%s0x%llx %d <Net>.fc1", GP_TORCH_TENSOR_PREFIX,
		 (unsigned long long)blocks[p0].addr, 1 << 20);
	mark(1, text);
	blocks[p0].layer = 0;
	idle(1200000000);
	check_record(GP_OUTLINE_BY_SECOND, 0);
	idle(300000000);
	CHECK_EQ_INT(gp_outline_next(ol, &(struct gp_outline_rec){ 0 }), 0); /* not a second yet */
	idle(900000000);
	check_record(GP_OUTLINE_BY_SECOND, 0);
	/* steps: a leak from the third; records closed by each mark */
	for (uint64_t n = 1; n <= 12; n++) {
		one_step(n, n >= 3);
		check_record(GP_OUTLINE_BY_STEP, n);
	}
	/* steps stop: a minute later, seconds again */
	idle(30000000000ll);
	CHECK_EQ_INT(gp_outline_next(ol, &(struct gp_outline_rec){ 0 }), 0);
	p0 = alloc_block(1, 3 << 20, C_OTHER, -1);
	free_block(1, alloc_block(1, 1 << 20, C_OTHER, -1)); /* the most, gone at the end */
	idle(31000000000ll);
	check_record(GP_OUTLINE_BY_SECOND, 13);
	/* a stretch that only frees: its most is where it began */
	free_block(1, p0);
	idle(1000000000);
	check_record(GP_OUTLINE_BY_SECOND, 13);
	alloc_block(1, 5 << 20, C_OTHER, -1);
	gp_outline_end(ol, now_ns);
	check_record(GP_OUTLINE_BY_END, 13);
	gp_tw_set_tap(tw, NULL, NULL);
	gp_tw_close(tw, NULL);
	gp_outline_free(ol);
	gp_gz_ring_free(ring);
}

/* Lines written out of time order (CUPTI's buffers come late): a stretch's
 * times follow the latest seen, in order. */
static void test_out_of_order(void)
{
	struct gp_gz_ring *ring;
	struct gp_outline_rec r;

	CHECK_EQ_INT(gp_gz_ring_new(&ring, 1 << 20, 1), 0);
	CHECK_EQ_INT(gp_tw_open_ring(&tw, ring), 0);
	CHECK_EQ_INT(gp_outline_new(&ol), 0);
	gp_tw_set_tap(tw, gp_outline_observe, ol);
	nblocks = 0;
	allocated = 0;
	now_ns = 100000;
	alloc_block(1, 1 << 20, C_OTHER, -1);  /* at 102000..105000 */
	now_ns -= 50000;
	alloc_block(1, 2 << 20, C_OTHER, -1);  /* earlier, written later: the peak */
	now_ns -= 20000;
	mark(1, "step:1");
	CHECK_EQ_INT(gp_outline_next(ol, &r), 1);
	CHECK(r.allocated_peak == 3 << 20 && r.begin_ns <= r.peak_ns && r.peak_ns <= r.end_ns);
	CHECK(r.peak_ns == r.begin_ns && r.end_ns == r.begin_ns);
	gp_tw_set_tap(tw, NULL, NULL);
	gp_tw_close(tw, NULL);
	gp_outline_free(ol);
	gp_gz_ring_free(ring);
}

int main(void)
{
	test_steps();
	test_out_of_order();
	return CHECK_DONE();
}
