/* gp_merge_fit_collectives (viewer/merge/align.c): the offset between two
 * hosts' clocks from the ends of their NCCL kernels, on made-up kernels
 * whose true offset is known. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "merge.h"

#define N 40
static const char *const names[] = { "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
				     "ncclDevKernel_AllGather_RING_LL", "ncclDevKernel_SendRecv" };

/* Kernel i of a run of collectives: ends at T0 + i ms on the reference's
 * clock; the other host reads offset less, give or take jitter. */
static void fill(struct gp_merge_kernel *ref, struct gp_merge_kernel *oth, size_t n,
		 int64_t offset, unsigned seed)
{
	srand(seed);
	for (size_t i = 0; i < n; i++) {
		int64_t end = 1700000000000000000ll + (int64_t)i * 1000000, jitter = rand() % 601 - 300;

		ref[i] = (struct gp_merge_kernel){ (uint32_t)(i % 2), end - 50000 - rand() % 9000, end };
		oth[i] = (struct gp_merge_kernel){ (uint32_t)(i % 2), end - offset - 300000,
						   end - offset + jitter };
	}
	/* file order is not time order */
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1);
		struct gp_merge_kernel t = oth[i];

		oth[i] = oth[j];
		oth[j] = t;
	}
}

int main(void)
{
	struct gp_merge_kernel ref[N + 1], oth[N + 1];
	struct gp_merge_fit fit;
	int64_t d;

	/* the offset within the jitter, both signs */
	for (int64_t off = -3217123; off <= 3217123; off += 3217123) {
		fill(ref, oth, N, off, 7);
		CHECK_EQ_INT(gp_merge_fit_collectives(ref, N, oth, N, names, &fit), 0);
		d = fit.offset_ns - off;
		CHECK(d > -300 && d < 300);
		CHECK_EQ_U64(fit.matched, N);
		CHECK(fit.residual_ns > 0 && fit.residual_ns <= 300);
	}

	/* a name only one side has is passed over; an outlier does not move the median */
	fill(ref, oth, N, 5000, 3);
	ref[N] = (struct gp_merge_kernel){ 2, 1, 2 };
	oth[0].end_ns += 1000000;
	CHECK_EQ_INT(gp_merge_fit_collectives(ref, N + 1, oth, N, names, &fit), 0);
	CHECK(fit.offset_ns > 4700 && fit.offset_ns < 5300);
	CHECK_EQ_U64(fit.matched, N);

	/* one kernel missing on a side: the k-th are not the same collective */
	fill(ref, oth, N, 5000, 4);
	CHECK_EQ_INT(gp_merge_fit_collectives(ref, N, oth, N - 1, names, &fit), -EINVAL);
	CHECK(strstr(fit.why, "kernels on one host") != NULL);
	CHECK(strstr(fit.why, "ncclDevKernel_") != NULL);

	/* too few to trust */
	fill(ref, oth, 2, 5000, 5);
	CHECK_EQ_INT(gp_merge_fit_collectives(ref, 2, oth, 2, names, &fit), -EINVAL);
	CHECK_STR(fit.why, "2 NCCL kernels matched, 3 needed");
	CHECK_EQ_INT(gp_merge_fit_collectives(ref, 0, oth, 0, names, &fit), -EINVAL);
	CHECK_EQ_U64(fit.matched, 0);

	/* traces with no NCCL kernel at all: no arrays (NULL), a plain answer
	 * (under UBSan, qsort(NULL, 0) would stop here) */
	CHECK_EQ_INT(gp_merge_fit_collectives(NULL, 0, NULL, 0, names, &fit), -EINVAL);
	CHECK_STR(fit.why, "neither host's trace has one");
	fill(ref, oth, N, 5000, 6);
	CHECK_EQ_INT(gp_merge_fit_collectives(ref, N, NULL, 0, names, &fit), -EINVAL);
	CHECK_STR(fit.why, "this host's trace has none");

	/* an even count: the mean of the middle two */
	for (int i = 0; i < 4; i++) {
		ref[i] = (struct gp_merge_kernel){ 0, 1000 * i, 1000 * i + 500 };
		oth[i] = (struct gp_merge_kernel){ 0, 1000 * i, 1000 * i + 500 - 10 * (i + 1) };
	}
	CHECK_EQ_INT(gp_merge_fit_collectives(ref, 4, oth, 4, names, &fit), 0);
	CHECK_EQ_INT(fit.offset_ns, 25);
	CHECK_EQ_INT(fit.residual_ns, 10);
	return CHECK_DONE();
}
