/* The Python stacks of a trace (torch.stack events, --stacks): each one's
 * frames, and the frame that stands for it in a report, the innermost of
 * the program's own code ("train.py:42 in forward"), the libraries' frames
 * (installed packages, Python's standard library, gpuprof's hooks) below
 * it folded. */
#ifndef GPUPROF_AN_STACKS_H
#define GPUPROF_AN_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

/* ids a trace may use; the recorder gives at most 2^20 */
#define AN_MAX_STACK_ID (1u << 24)
/* frames kept of a stack; the recorder writes at most 129 */
#define AN_MAX_STACK_FRAMES 1024

struct an_sframe {
	struct an_str *file, *func; /* references */
	uint32_t line;
	uint8_t user;               /* the program's own code (an_stack_file_is_user) */
};

struct an_stack {
	uint32_t n;
	int32_t user;       /* index of the innermost user frame; -1: none */
	struct an_str *key; /* "FILE:LINE in FUNC" of that frame, full path (a reference); NULL: none */
	struct an_sframe f[]; /* innermost first */
};

struct an_stacks {
	struct an_stack **v; /* indexed by id; NULL: not given */
	size_t cap;
	size_t n;            /* stacks given */
};

/* Reads a torch.stack's frames (the JSON array's text, [[file, line,
 * function], ...]) as stack id. 0; -EINVAL with a reason in why (not such
 * an array, an id given twice, out of range); -ENOMEM. */
int an_stacks_add(struct an_stacks *t, struct an_strtab *st, uint64_t id, const char *json, size_t n,
		  char *why, size_t whycap);
static inline const struct an_stack *an_stacks_get(const struct an_stacks *t, uint32_t id)
{
	return id && id < t->cap ? t->v[id] : NULL;
}
void an_stacks_free(struct an_stacks *t, struct an_strtab *st);

/* Whether a frame's file is the program's own code: not under an installed
 * package (site-packages, dist-packages), Python's standard library
 * (lib/pythonX.Y/), a frozen or generated module (<...>), nor gpuprof's own
 * hooks (gpuprof_*.py). */
int an_stack_file_is_user(const char *file, size_t n);

#endif
