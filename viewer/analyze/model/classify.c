/* The category of an allocation, from when it was made and when (if ever)
 * it was freed. The rules are written down in CATEGORIES.md; keep both in
 * step. Only for PyTorch traces (tensor and native modes): in cuda mode
 * nothing says what a buffer is for. */
#include <stdio.h>
#include <string.h>

#include "state.h"

const char *const an_cat_names[CAT_N] = {
	"parameters", "gradients", "optimizer state", "activations", "temporaries",
	"inputs", "other",
};

static int other(const struct an_rec *r, char *label, size_t cap, const char *what)
{
	if (what)
		snprintf(label, cap, "%s", what);
	else if (r->library && r->api)
		snprintf(label, cap, "%s (%s)", r->library->s, r->api->s);
	else if (r->library)
		snprintf(label, cap, "%s", r->library->s);
	else if (r->api)
		snprintf(label, cap, "%s", r->api->s);
	else
		snprintf(label, cap, "%s, API call not in the trace", an_kind_names[r->kind]);
	return CAT_OTHER;
}

/* alive when a later forward began: freed after one, or never freed and one
 * began after it was made */
static int into_forward(const struct an_proc *p, const struct an_rec *r)
{
	uint32_t later = (r->flags & R_FREED) ? r->free_fwd_count : p->fwd_count;

	return later > r->fwd_count;
}

int an_classify(const struct an_proc *p, const struct an_rec *r, char *label, size_t cap)
{
	int freed = (r->flags & R_FREED) != 0;

	label[0] = '\0';
	if (r->flags & R_OTHER)
		return other(r, label, cap, NULL);
	if (p->mode == MODE_NATIVE && (r->flags & R_RELEASED_ON_OOM))
		return other(r, label, cap, "PyTorch's cache, released after the failed allocation");
	/* gathered whole for its module (FSDP2's unsharded parameters) */
	if (r->flags & R_PARAM)
		return CAT_PARAMETERS;
	/* before the first forward of a model: a process that never ran one
	 * has no model, and its tensors are no parameters */
	if ((r->flags & R_BEFORE_FWD) && p->fwd_count) {
		/* freed only after the last forward began: at the program's
		 * exit, with the model (PyTorch frees its tensors at teardown) */
		if (!freed || r->free_fwd_count >= p->fwd_count)
			return CAT_PARAMETERS;
		if (into_forward(p, r))
			return CAT_INPUTS;
		return CAT_TEMPORARIES;
	}
	if ((r->flags & R_FREED_IN_RANGE) && r->range_inst)
		return CAT_TEMPORARIES;
	switch (r->phase) {
	case PH_BACKWARD:
		if (freed && (r->flags & R_FREED_IN_PHASE))
			return CAT_TEMPORARIES;
		return CAT_GRADIENTS;
	case PH_OPTIMIZER:
		if (freed && (r->flags & R_FREED_IN_PHASE))
			return CAT_TEMPORARIES;
		return CAT_OPTIMIZER;
	case PH_ZERO_GRAD:
		if (freed && (r->flags & R_FREED_IN_PHASE))
			return CAT_TEMPORARIES;
		return other(r, label, cap, "PyTorch, made in zero_grad");
	case PH_FORWARD:
		return CAT_ACTIVATIONS;
	default:
		break;
	}
	/* made outside modules and phases, once training had begun */
	if (r->flags & R_NO_API)
		return other(r, label, cap, "PyTorch, thread unknown (API call not in the trace)");
	if (freed && r->free_phase == PH_BACKWARD)
		return CAT_ACTIVATIONS; /* a loss or such, kept for backward */
	if (into_forward(p, r))
		return CAT_INPUTS;
	return other(r, label, cap, "PyTorch, outside modules and phases");
}
