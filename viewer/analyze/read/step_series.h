/* A series of step points kept bounded: every step boundary's live memory
 * and the step's peak, at most AN_MAX_SERIES points; past that every
 * other point goes and one is kept every twice as many steps, a kept
 * point's peak covering the dropped ones before it. The model's series of
 * the trace's step marks (model/memory.c) and the flight recorder's
 * outline (outline.c) keep theirs so. */
#ifndef GPUPROF_AN_STEP_SERIES_H
#define GPUPROF_AN_STEP_SERIES_H

#include <stddef.h>
#include <stdint.h>

#define AN_MAX_SERIES 512

struct an_step_pt {
	uint32_t step;
	int64_t ts;
	uint64_t fw, reserved, total;
	uint64_t peak;      /* fw's most since the point before (the step's peak) */
	int reserved_known;
};

/* A step mark, for a series pt[0..*n) (one point kept every *stride
 * marks, *marks seen so far, both updated): the point to fill for it, or
 * NULL where the stride passes over it. */
static inline struct an_step_pt *an_series_mark(struct an_step_pt *pt, size_t *n, uint32_t *stride,
						uint64_t *marks)
{
	if (!*stride)
		*stride = 1;
	(*marks)++;
	if ((*marks - 1) % *stride)
		return NULL;
	if (*n == AN_MAX_SERIES) {
		for (size_t i = 0; i < AN_MAX_SERIES / 2; i++) {
			uint64_t peak = pt[2 * i].peak;

			if (i && pt[2 * i - 1].peak > peak)
				peak = pt[2 * i - 1].peak;
			pt[i] = pt[2 * i];
			pt[i].peak = peak;
		}
		*n = AN_MAX_SERIES / 2;
		*stride *= 2;
		if ((*marks - 1) % *stride)
			return NULL;
	}
	return &pt[(*n)++];
}

#endif
