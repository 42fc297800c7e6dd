/* The Python stack of the calling thread, as a small integer (--stacks).
 *
 * PyTorch's allocator calls gpuprof's hook on the thread that allocates,
 * under the allocator's lock and usually without the GIL (PyTorch's Python
 * bindings release it around every op). Taking the GIL there could deadlock
 * (a thread that holds the GIL may be waiting for the allocator's lock), so
 * the stack is read without it: the thread's own interpreter frames, which
 * do not change while that thread runs C code, from CPython's frame structs
 * (internal headers, CPython 3.11 to 3.13). Each distinct stack is turned
 * into text once and handed to the recorder (gp_ta_stack_fn) with a new id;
 * after that a stack costs a walk of its frames and one table lookup. */
#ifndef GPUPROF_STACKS_H
#define GPUPROF_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "torch_alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frames kept of one stack: the innermost GP_STK_INNER and the outermost
 * GP_STK_OUTER of a deeper one, with one frame between saying how many were
 * left out ("...", line 0). */
#define GP_STK_INNER 96
#define GP_STK_OUTER 32
/* Distinct stacks kept; past it gp_stk_current() says 0 and counts it. */
#define GP_STK_MAX_STACKS (1u << 20)

/* 0; -ENOTSUP where this Python's frames cannot be read (its version),
 * with a reason in why. emit is called for each new stack, under the
 * module's lock. Call once, before gp_stk_current(). */
int gp_stk_init(gp_ta_stack_fn emit, char *why, size_t cap);

/* The calling thread's Python stack: its id (> 0), or 0 when the thread
 * runs no Python code, the table is full, or emit refused it. Any thread,
 * GIL held or not; never blocks on anything but this module's own lock. */
uint32_t gp_stk_current(void);

struct gp_stk_counts {
	uint64_t lookups;  /* gp_stk_current() calls that found frames */
	uint64_t new_keys; /* walks not seen before (the text was made) */
	uint64_t stacks;   /* distinct stacks (ids given) */
	uint64_t dropped;  /* stacks not kept: table full, or emit failed */
};
void gp_stk_get_counts(struct gp_stk_counts *out);

#ifdef __cplusplus
}
#endif

#endif
