/* PyTorch's memory marks, as the hooks write them (profiler/python/
 * gpuprof_torch.py, gpuprof_history.py), must become counter points at the
 * times gpuprof analyze places them; anything else must give no point. */
#include "check.h"
#include "torch_counters.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct got {
	enum gp_tc_track track[64];
	struct gp_tc_point pt[64];
	size_t n;
};

static void record(void *ctx, enum gp_tc_track track, const struct gp_tc_point *p)
{
	struct got *g = ctx;
	if (g->n < 64) {
		g->track[g->n] = track;
		g->pt[g->n] = *p;
	}
	g->n++;
}

static int mark(struct gp_torch_counters *tc, struct got *g, const char *text, int64_t ts)
{
	return gp_tc_mark(tc, text, strlen(text), ts, record, g);
}

static void test_other_marks(void)
{
	static const char *const others[] = {
		"step:3", "gpuprof:torch {\"mode\": \"native\"}", "gpuprof:torch.memory",
		"gpuprof:torch.memoryx {\"allocated\": 1, \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.histories {}", "", "gpuprof:torch.memory\t{}",
	};
	struct gp_torch_counters tc;
	struct got g = { 0 };

	gp_tc_init(&tc);
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++)
		CHECK(mark(&tc, &g, others[i], 100) == 0);
	CHECK(g.n == 0 && tc.bad_marks == 0 && tc.points == 0);
}

static void test_sampled(void)
{
	struct gp_torch_counters tc;
	struct got g = { 0 };

	gp_tc_init(&tc);
	CHECK(mark(&tc, &g, "gpuprof:torch.memory {\"allocated\": 1024, \"reserved\": 2097152, "
		  "\"device\": 1}", 5000) == 1);
	CHECK(g.n == 1 && g.track[0] == GP_TC_SAMPLED && g.pt[0].ts == 5000 &&
	      g.pt[0].allocated == 1024 && g.pt[0].reserved == 2097152 && g.pt[0].device == 1);
	/* another thread's sample, marked earlier but queued later: left out
	 * of the counter (a counter track is in time order), counted */
	CHECK(mark(&tc, &g, "gpuprof:torch.memory {\"allocated\": 0, \"reserved\": 0, \"device\": 1}",
		   4999) == 1);
	CHECK(g.n == 1 && tc.left_out == 1);
	/* same time, or another device's earlier one: kept */
	CHECK(mark(&tc, &g, "gpuprof:torch.memory {\"allocated\": 0, \"reserved\": 0, \"device\": 1}",
		   5000) == 1);
	CHECK(mark(&tc, &g, "gpuprof:torch.memory {\"device\": 0, \"reserved\": 7, \"allocated\": 3}",
		   10) == 1);
	CHECK(g.n == 3 && g.pt[2].device == 0 && g.pt[2].allocated == 3 && g.pt[2].reserved == 7);
	/* no device (older hooks): device 0 */
	CHECK(mark(&tc, &g, "gpuprof:torch.memory {\"allocated\": 5, \"reserved\": 8}", 11) == 1);
	CHECK(g.n == 4 && g.pt[3].device == 0 && g.pt[3].allocated == 5 && g.pt[3].ts == 11);
	/* before the trace began: left out */
	CHECK(mark(&tc, &g, "gpuprof:torch.memory {\"allocated\": 0, \"reserved\": 0, \"device\": 2}",
		   -1) == 1);
	CHECK(g.n == 4 && tc.left_out == 2 && tc.points == 4);
}

/* Two parts of device 0's history as gpuprof_history.marks writes them.
 * The second's unix_ns says its clock offset is 40 µs off the first's (the
 * two clocks were read apart): all points use the first's, as analyze does. */
static void test_history(void)
{
	struct gp_torch_counters tc;
	struct got g = { 0 };
	const int64_t mark0 = 9000000000, unix0 = 1763820000000000000;
	char text[512];

	gp_tc_init(&tc);
	snprintf(text, sizeof(text),
		 "gpuprof:torch.history {\"device\": 0, \"part\": 0, \"last\": false, "
		 "\"complete\": true, \"t0_us\": %lld, \"p\": [0, 512, 2097152, 10, 1536, 2097152, "
		 "0, 1024, 2097152], \"unix_ns\": %lld}",
		 (long long)(unix0 / 1000 - 5000000), (long long)unix0);
	CHECK(mark(&tc, &g, text, mark0) == 1);
	snprintf(text, sizeof(text),
		 "gpuprof:torch.history {\"device\": 0, \"part\": 1, \"last\": true, "
		 "\"complete\": true, \"t0_us\": %lld, \"p\": [0, 0, 2097152, 5, 0, 0], "
		 "\"unix_ns\": %lld}",
		 (long long)(unix0 / 1000 - 4000000), (long long)(unix0 + 40000 + 1000));
	CHECK(mark(&tc, &g, text, mark0 + 1000) == 1);
	CHECK(g.n == 5 && tc.points == 5 && tc.left_out == 0 && tc.bad_marks == 0);
	/* the first point: 5 s before the first mark's time */
	CHECK(g.track[0] == GP_TC_HISTORY && g.pt[0].ts == mark0 - 5000000000 &&
	      g.pt[0].allocated == 512 && g.pt[0].reserved == 2097152);
	CHECK(g.pt[1].ts == g.pt[0].ts + 10000 && g.pt[1].allocated == 1536);
	CHECK(g.pt[2].ts == g.pt[1].ts && g.pt[2].allocated == 1024);
	CHECK(g.pt[3].ts == mark0 - 4000000000 && g.pt[3].allocated == 0);
	CHECK(g.pt[4].ts == g.pt[3].ts + 5000 && g.pt[4].reserved == 0 && g.pt[4].device == 0);
	/* sampled points have their own track: one older than the history's
	 * last is not left out */
	CHECK(mark(&tc, &g, "gpuprof:torch.memory {\"allocated\": 1, \"reserved\": 2, \"device\": 0}",
		   10) == 1);
	CHECK(g.n == 6 && tc.left_out == 0);
	/* past the bound, history points are left out; samples are not bounded */
	tc.max_history_points = 6;
	snprintf(text, sizeof(text),
		 "gpuprof:torch.history {\"device\": 0, \"part\": 2, \"last\": true, "
		 "\"complete\": true, \"t0_us\": %lld, \"p\": [0, 7, 9, 1, 8, 9], \"unix_ns\": 1}",
		 (long long)(unix0 / 1000 - 3000000));
	CHECK(mark(&tc, &g, text, mark0 + 2000) == 1);
	CHECK(g.n == 7 && tc.history_points == 6 && tc.left_out == 1 && g.pt[6].allocated == 7);
	CHECK(mark(&tc, &g, "gpuprof:torch.memory {\"allocated\": 1, \"reserved\": 2, \"device\": 0}",
		   20) == 1);
	CHECK(g.n == 8 && tc.points == 8);
	/* an empty history */
	CHECK(mark(&tc, &g, "gpuprof:torch.history {\"device\": 3, \"part\": 0, \"last\": true, "
		  "\"complete\": true, \"t0_us\": 0, \"p\": [], \"unix_ns\": 1}", 10) == 1);
	CHECK(g.n == 8);
}

/* Every one is refused whole: no point of it is given. */
static void test_bad(void)
{
	static const char *const bad[] = {
		/* sampled */
		"gpuprof:torch.memory {\"allocated\": 1, \"device\": 0}",
		"gpuprof:torch.memory {\"allocated\": -1, \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory {\"allocated\": 1.5, \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory {\"allocated\": 1e3, \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory {\"allocated\": 01, \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory {\"allocated\": 1125899906842625, \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory {\"allocated\": 99999999999999999999999, \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory {\"allocated\": 1, \"reserved\": 2, \"device\": 64}",
		"gpuprof:torch.memory {\"allocated\": 1, \"reserved\": 2, \"device\": 0, \"device\": 1}",
		"gpuprof:torch.memory {\"allocated\": 1, \"reserved\": 2, \"device\": 0} x",
		"gpuprof:torch.memory {\"allocated\": 1, \"reserved\": 2, \"device\": 0",
		"gpuprof:torch.memory {\"allocated\": \"1\", \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory {\"allocated\": 1, \"reserved\": 2, \"device\": 0, \"x\": {}}",
		"gpuprof:torch.memory {\"allocated\": 1, \"reserved\": 2, \"device\": 0, \"p\": [1, 2, 3]}",
		"gpuprof:torch.memory {\"allocated\": true, \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory {\"allocated\": 1 \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory {\"Allocated\": 1, \"reserved\": 2, \"device\": 0}",
		"gpuprof:torch.memory ",
		/* history */
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [0, 1, 2]}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [0, 1], \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [0, 1, 2, 3], \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [0, 1, -2], \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [0, 1, 2,], \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [0, 1, 2, \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [[0], 1, 2], \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [1000000000001, 1, 2], \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 3999999999999999, "
		"\"p\": [0, 1, 2, 2, 1, 2], \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 4000000000000001, \"p\": [], \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": 7, \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [0, 1, 2], "
		"\"unix_ns\": 4000000000000000001}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [0, 1, 2], "
		"\"p\": [0, 1, 2], \"unix_ns\": 9}",
		"gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, \"p\": [0, 1, 2], \"unix_ns\": 9}}",
		"gpuprof:torch.history [0, 1, 2]",
	};
	struct gp_torch_counters tc;
	struct got g = { 0 };

	gp_tc_init(&tc);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int r = mark(&tc, &g, bad[i], 1000000);
		if (r != -EINVAL)
			fprintf(stderr, "taken: %s\n", bad[i]);
		CHECK(r == -EINVAL);
	}
	CHECK(g.n == 0 && tc.points == 0 && tc.bad_marks == sizeof(bad) / sizeof(*bad));
	/* a refused mark sets no clock offset: the next good one sets it */
	CHECK(mark(&tc, &g, "gpuprof:torch.history {\"device\": 0, \"part\": 0, \"t0_us\": 5, "
		  "\"p\": [0, 1, 2], \"unix_ns\": 9000}", 20000) == 1);
	CHECK(g.n == 1 && g.pt[0].ts == 5000 + 20000 - 9000);
	/* the largest values allowed are taken */
	CHECK(mark(&tc, &g, "gpuprof:torch.memory {\"allocated\": 1125899906842624, "
		  "\"reserved\": 0, \"device\": 63}", 0) == 1);
	CHECK(g.n == 2 && g.pt[1].allocated == 1125899906842624ull && g.pt[1].device == 63);
}

int main(void)
{
	test_other_marks();
	test_sampled();
	test_history();
	test_bad();
	return CHECK_DONE();
}
