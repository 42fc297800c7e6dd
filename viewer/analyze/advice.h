/* What to do about a failed allocation: the heuristics behind the result's
 * advice (gp_an_advice in result.h; the rules in CATEGORIES.md). */
#ifndef GPUPROF_AN_ADVICE_H
#define GPUPROF_AN_ADVICE_H

#include "leak.h"
#include "result.h"
#include "set.h"

/* The advice for failure o of pd, whose set of live allocations is s
 * (empty when not detailed), into r's arena: *out (NULL when none) and *n.
 * capacity: the device's memory, 0 when not known; lk: pd's leak verdict.
 * 0 or -ENOMEM. */
int an_advise(struct gp_an_result *r, const struct an_pd *pd, const struct an_oom *o,
	      const struct an_set *s, uint64_t capacity, const struct an_leak *lk,
	      struct gp_an_advice **out, size_t *n);

#endif
