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

/* The advice being gathered for one failure or one run (advice.c):
 * an_adv_add() one each, an_adv_finish() hands them to the result. */
struct an_adv_list {
	struct gp_an_result *r;
	struct gp_an_advice v[GP_AN_ADVICE_N]; /* one of each kind at most */
	size_t n;
	int oom;
};
/* text is copied into r's arena; a failed copy makes an_adv_finish fail. */
void an_adv_add(struct an_adv_list *a, enum gp_an_advice_kind kind, uint64_t bytes, uint64_t of,
		const char *text);
/* a's advice into r's arena: *out (NULL when none) and *n. 0 or -ENOMEM. */
int an_adv_finish(struct an_adv_list *a, struct gp_an_advice **out, size_t *n);

/* Activations alive at a moment that were kept for a backward that never
 * came (R_KEPT_NO_BACKWARD), but for the newest of them. */
struct an_kept {
	uint64_t bytes, count;
};
void an_kept_of(const struct an_set *s, struct an_kept *k);

/* The advice about device d's run as a whole, from its result and k, the
 * activations kept at its peak, into r's arena: *out (NULL when none) and
 * *n. 0 or -ENOMEM. */
int an_advise_run(struct gp_an_result *r, const struct gp_an_device *d, const struct an_kept *k,
		  struct gp_an_advice **out, size_t *n);

#endif
