/* Is memory growing step after step? A linear fit of the live bytes at each
 * step boundary, after the warm-up steps (optimizer state, allocator pools
 * fill during the first steps and then stay flat). The rules are in
 * CATEGORIES.md ("Leaks"). */
#ifndef GPUPROF_AN_LEAK_H
#define GPUPROF_AN_LEAK_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

#define AN_LEAK_WARMUP 3 /* step boundaries skipped */
#define AN_LEAK_MIN_POINTS 5

enum an_leak_verdict {
	LEAK_NO_STEPS,  /* no step marks */
	LEAK_TOO_FEW,   /* too few steps after the warm-up to judge */
	LEAK_NONE,
	LEAK_FOUND,
};

struct an_leak {
	int verdict;
	size_t first, n;        /* series points used */
	uint32_t since_step, last_step;
	double slope;           /* bytes per step */
	double r2;
	double per_second;      /* bytes per second, 0 if unknown */
	uint32_t grew, shrank, flat; /* deltas between the points used */
	uint64_t live_first, live_last, total_last;
	double steps_to_full;   /* < 0: unknown capacity */
};

void an_leak_fit(const struct an_pd *pd, uint64_t capacity, struct an_leak *out);

/* Growth that is not a leak: each step's peak above the one before by more
 * than AN_GROWTH_MIN_STEP, AN_GROWTH_MIN_RUN steps or more in a row up to
 * the last, to AN_GROWTH_MIN_FACTOR times where the run began or more (a
 * batch or a sequence that grows; what a leak leaves between steps is in
 * the leak's fit). Counted over every step, the warm-up's too. */
#define AN_GROWTH_MIN_STEP 1.05
#define AN_GROWTH_MIN_RUN 3
#define AN_GROWTH_MIN_FACTOR 1.5

struct an_growth {
	int found;
	size_t first, last;      /* series points: where the run begins, the last */
	double factor_per_step;  /* geometric mean of the step-to-step ratios */
	double bytes_per_step;   /* (last peak - first peak) / steps */
	uint64_t last_increase;  /* the last step's peak less the one's before */
	double next_peak;        /* the last peak times the factor */
};

void an_growth_fit(const struct an_pd *pd, struct an_growth *out);

#endif
