/* Stream-ordered allocations recorded by patched calls (alloc_patch.c). */
#ifndef GPUPROF_ALLOC_PATCH_H
#define GPUPROF_ALLOC_PATCH_H

#include "got_patch.h"

/* When the callbacks record allocations (gp_rec_by_callbacks): points the
 * loaded libraries' calls of cudaMallocAsync and cudaFreeAsync at recording
 * wrappers, unless the configuration says not to (GPUPROF_PATCH=0). Says
 * nothing; keeps subscriber to turn callbacks back on (gp_alloc_patch_tick). */
void gp_alloc_patch_start(void *subscriber);
/* Whether every caller found is patched: then the driver-level callbacks of
 * cuMemAllocAsync and cuMemFreeAsync are off (gp_callbacks_enable), from
 * the writer's first tick on. */
int gp_alloc_patch_active(void);
/* How stream-ordered allocations are captured, for the trace's
 * "gpuprof.alloc_capture" event. */
struct gp_alloc_capture {
	struct gp_got_result slots; /* the callers' slots found (got_patch.h) */
	int callbacks_off;          /* cuMemAllocAsync/cuMemFreeAsync not watched */
};
/* The writer thread, now and then: patches objects loaded since, repairs
 * slots, and turns the callbacks back on if a caller cannot be patched.
 * 1 with *cap filled when the capture is new or changed, else 0. */
int gp_alloc_patch_tick(struct gp_alloc_capture *cap);

#endif
