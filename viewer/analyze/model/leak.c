/* Leak verdict from the step series, see leak.h. */
#include "leak.h"

#include <math.h>
#include <string.h>

void an_growth_fit(const struct an_pd *pd, struct an_growth *out)
{
	const struct an_step_pt *s = pd->series;
	size_t n = pd->nseries, first;
	double steps;

	memset(out, 0, sizeof(*out));
	if (n < AN_GROWTH_MIN_RUN + 1)
		return;
	first = n - 1;
	while (first > 0 && s[first - 1].peak &&
	       (double)s[first].peak > (double)s[first - 1].peak * AN_GROWTH_MIN_STEP)
		first--;
	if (n - 1 - first < AN_GROWTH_MIN_RUN ||
	    (double)s[n - 1].peak < (double)s[first].peak * AN_GROWTH_MIN_FACTOR)
		return;
	steps = (double)(s[n - 1].step - s[first].step);
	if (steps <= 0)
		return;
	out->found = 1;
	out->first = first;
	out->last = n - 1;
	out->factor_per_step = pow((double)s[n - 1].peak / (double)s[first].peak, 1.0 / steps);
	out->bytes_per_step = ((double)s[n - 1].peak - (double)s[first].peak) / steps;
	out->last_increase = s[n - 1].peak - s[n - 2].peak;
	out->next_peak = (double)s[n - 1].peak * pow(out->factor_per_step,
						    (double)(s[n - 1].step - s[n - 2].step));
}

void an_leak_fit(const struct an_pd *pd, uint64_t capacity, struct an_leak *out)
{
	const struct an_step_pt *s = pd->series;
	double mx = 0, my = 0, vx = 0, vy = 0, cov = 0;
	size_t first = 0, half;
	uint32_t grew_lo = 0, grew_hi = 0;

	memset(out, 0, sizeof(*out));
	out->steps_to_full = -1;
	if (pd->nseries == 0) {
		out->verdict = LEAK_NO_STEPS;
		return;
	}
	/* the warm-up: the first boundaries, counted in steps (the series may
	 * keep one point every `stride` steps) */
	while (first < pd->nseries && s[first].step <= AN_LEAK_WARMUP)
		first++;
	out->first = first;
	out->n = pd->nseries - first;
	out->last_step = s[pd->nseries - 1].step;
	out->live_last = s[pd->nseries - 1].fw;
	out->total_last = s[pd->nseries - 1].total;
	if (out->n < AN_LEAK_MIN_POINTS) {
		out->verdict = LEAK_TOO_FEW;
		return;
	}
	out->since_step = s[first].step;
	out->live_first = s[first].fw;
	half = first + out->n / 2;
	/* centered sums: bytes are large and their variations small */
	for (size_t i = first; i < pd->nseries; i++) {
		mx += (double)s[i].step;
		my += (double)s[i].fw;
	}
	mx /= (double)out->n;
	my /= (double)out->n;
	for (size_t i = first; i < pd->nseries; i++) {
		double dx = (double)s[i].step - mx, dy = (double)s[i].fw - my;

		vx += dx * dx;
		vy += dy * dy;
		cov += dx * dy;
		if (i == first)
			continue;
		if (s[i].fw > s[i - 1].fw) {
			out->grew++;
			if (i <= half)
				grew_lo++;
			else
				grew_hi++;
		} else if (s[i].fw < s[i - 1].fw) {
			out->shrank++;
		} else {
			out->flat++;
		}
	}
	if (vx > 0)
		out->slope = cov / vx;
	out->r2 = (vx > 0 && vy > 0) ? (cov * cov) / (vx * vy) : 0;
	if (s[pd->nseries - 1].ts > s[first].ts && out->slope > 0)
		out->per_second = out->slope * (double)(s[pd->nseries - 1].step - s[first].step) /
				  ((double)(s[pd->nseries - 1].ts - s[first].ts) / 1e9);
	{
		uint32_t deltas = out->grew + out->shrank + out->flat;
		/* every tensor is seen in tensor and cuda mode: a leak grows at
		 * (nearly) every step; PyTorch's segments grow by whole segments,
		 * every few steps */
		int steady = pd->proc->mode == MODE_NATIVE ? out->grew >= 3
							    : out->grew * 4 >= deltas * 3;

		if (out->slope > 0 && out->r2 >= 0.8 && out->shrank * 10 <= deltas && steady &&
		    grew_lo && grew_hi && out->live_last > out->live_first)
			out->verdict = LEAK_FOUND;
		else
			out->verdict = LEAK_NONE;
	}
	if (out->verdict == LEAK_FOUND && capacity) {
		uint64_t used = out->total_last + pd->kind_live[K_DEVICE_STATIC];

		out->steps_to_full = used >= capacity ? 0 : floor((double)(capacity - used) / out->slope);
	}
}
