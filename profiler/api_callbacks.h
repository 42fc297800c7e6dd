/* API callbacks: failed allocations, allocations and frees
 * (api_callbacks.c), and the recording of stream-ordered allocations for
 * the patched calls (alloc_patch.c). */
#ifndef GPUPROF_API_CALLBACKS_H
#define GPUPROF_API_CALLBACKS_H

#include <stdint.h>

extern const char *const gp_memory_api_names[];
/* Turns the callbacks on or off as parts say: failed allocations with
 * GP_REC_OOM; allocations and frees with GP_REC_MEMORY but without
 * GP_REC_POOLS (see api_callbacks.c: without pool records CUPTI records
 * none), the driver-level cuMemAllocAsync and cuMemFreeAsync among them
 * unless async_patched (every caller's cudaMallocAsync and cudaFreeAsync
 * patched: alloc_patch.c records them). 0 or a CUptiResult. */
int gp_callbacks_enable(void *subscriber, unsigned parts, int async_patched);
/* Whether the callbacks record allocations and frees now (then CUPTI's own
 * records of what they record are skipped, should it write any). */
int gp_callbacks_tracking(void);
/* Whether a stream-ordered allocation or free that no wrapper records may
 * be under way (api_callbacks.c): one is, or none has come back and none
 * gone through a wrapper yet (the program's first call may still be making
 * its context); its callbacks must stay on until then. */
int gp_cb_async_running(void);
void gp_callbacks_handler(void *userdata, int domain, unsigned cbid, const void *cbdata);

/* Finds the driver calls the recording below needs (libcuda is loaded). */
void gp_cb_find_driver(void);
/* Nonzero on a thread inside a patched call (alloc_patch.c): the driver-level
 * callbacks of the call beneath it record nothing. */
extern __thread int gp_cb_wrapped;
/* For the patched calls: a stream-ordered allocation (is_free 0: addr,
 * bytes) or free (addr) on stream, as the callbacks would record it but with
 * the runtime call's name; a failed allocation of bytes. */
void gp_cb_record_async(int is_free, uint64_t addr, uint64_t bytes, void *stream,
			uint8_t per_thread);
void gp_cb_record_async_failure(uint64_t bytes, void *stream, int64_t result);

#endif
