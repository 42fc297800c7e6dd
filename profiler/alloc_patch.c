/* Stream-ordered allocations recorded by the calls themselves.
 *
 * In tensor mode PyTorch allocates every tensor with cudaMallocAsync and
 * frees it with cudaFreeAsync (its cudaMallocAsync backend, in
 * libc10_cuda.so), a few thousand of each a training step. CUPTI's
 * driver-level callbacks (api_callbacks.c) cost about 1.6 µs per allocation
 * and free on a busy host (bench/RESULTS.md, cost): most of it CUPTI's
 * own, and in a step whose forward pass waits for the host it all shows.
 * So the slots through which loaded libraries call cudaMallocAsync,
 * cudaFreeAsync and their per-thread-stream variants are pointed at the
 * wrappers below (got_patch.c), which call the function the slot called
 * and record the call as the callbacks would, under the runtime call's
 * name; the driver-level callbacks of cuMemAllocAsync and cuMemFreeAsync
 * are then turned off.
 *
 * Only while every caller found is patched: a caller bound to another copy
 * of libcudart, or a library calling cuMemAllocAsync or cuMemFreeAsync
 * itself, keeps the callbacks on, now or when it is loaded later (found by
 * the writer's next tick; calls made in between are missed). A wrapper
 * marks its thread so that the callback beneath it records nothing: both
 * ways can be on at once without recording a call twice. Not seen by
 * either way once the callbacks are off: a library that links libcudart
 * statically (its calls reach the driver through pointers, not slots);
 * GPUPROF_PATCH=0 keeps the callbacks. */
#include "alloc_patch.h"

#include "api_callbacks.h"
#include "config.h"
#include "state.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

typedef cudaError_t (*malloc_async_fn)(void **, size_t, cudaStream_t);
typedef cudaError_t (*free_async_fn)(void *, cudaStream_t);

static cudaError_t malloc_async(void **ptr, size_t size, cudaStream_t stream);
static cudaError_t malloc_async_ptsz(void **ptr, size_t size, cudaStream_t stream);
static cudaError_t free_async(void *ptr, cudaStream_t stream);
static cudaError_t free_async_ptsz(void *ptr, cudaStream_t stream);

enum { MALLOC, MALLOC_PTSZ, FREE, FREE_PTSZ, NTARGETS };
static struct gp_got_target targets[NTARGETS] = {
	[MALLOC] = { .name = "cudaMallocAsync", .replacement = (void *)malloc_async },
	[MALLOC_PTSZ] = { .name = "cudaMallocAsync_ptsz", .replacement = (void *)malloc_async_ptsz },
	[FREE] = { .name = "cudaFreeAsync", .replacement = (void *)free_async },
	[FREE_PTSZ] = { .name = "cudaFreeAsync_ptsz", .replacement = (void *)free_async_ptsz },
};
/* Callers of these need the callbacks. */
static const char *const driver_calls[] = { "cuMemAllocAsync", "cuMemAllocAsync_ptsz",
					    "cuMemFreeAsync", "cuMemFreeAsync_ptsz", NULL };
static struct gp_got_set slots = { .targets = targets, .n = NTARGETS, .also_watch = driver_calls };

static _Atomic int started;
static _Atomic int active;
static void *subscriber; /* borrowed from inject.c, lives as long as the process */
/* What the last scan found, for the trace; only the writer thread reads it
 * after start. */
static struct gp_got_result found;
static int unreported;

static int recording(void)
{
	return gp_rec_running() && gp_callbacks_tracking();
}

static cudaError_t call_malloc(int t, void **ptr, size_t size, cudaStream_t stream, uint8_t per_thread)
{
	/* set before its slot was written (got_patch.c): never NULL here */
	malloc_async_fn real = (malloc_async_fn)atomic_load(&targets[t].real);
	if (!real)
		return cudaErrorInitializationError;
	gp_cb_wrapped++;
	cudaError_t r = real(ptr, size, stream);
	gp_cb_wrapped--;
	if (recording()) {
		if (r == cudaSuccess)
			gp_cb_record_async(0, ptr ? (uint64_t)(uintptr_t)*ptr : 0, size, stream, per_thread);
		else
			gp_cb_record_async_failure(size, stream, r);
	}
	return r;
}

static cudaError_t call_free(int t, void *ptr, cudaStream_t stream, uint8_t per_thread)
{
	free_async_fn real = (free_async_fn)atomic_load(&targets[t].real);
	if (!real)
		return cudaErrorInitializationError;
	gp_cb_wrapped++;
	cudaError_t r = real(ptr, stream);
	gp_cb_wrapped--;
	if (r == cudaSuccess && recording())
		gp_cb_record_async(1, (uint64_t)(uintptr_t)ptr, 0, stream, per_thread);
	return r;
}

static cudaError_t malloc_async(void **ptr, size_t size, cudaStream_t stream)
{
	return call_malloc(MALLOC, ptr, size, stream, 0);
}

static cudaError_t malloc_async_ptsz(void **ptr, size_t size, cudaStream_t stream)
{
	return call_malloc(MALLOC_PTSZ, ptr, size, stream, 1);
}

static cudaError_t free_async(void *ptr, cudaStream_t stream)
{
	return call_free(FREE, ptr, stream, 0);
}

static cudaError_t free_async_ptsz(void *ptr, cudaStream_t stream)
{
	return call_free(FREE_PTSZ, ptr, stream, 1);
}

static int all_patched(const struct gp_got_result *res)
{
	return res->patched > 0 && res->left == 0 && res->others == 0;
}

void gp_alloc_patch_start(void *sub)
{
	struct gp_got_result res;

	subscriber = sub;
	if (!gp_rec_config()->patch)
		return;
	gp_cb_find_driver();
	if (gp_got_patch(&slots, &res) != 0)
		return; /* not this platform, or no memory: the callbacks record */
	/* found is applied to the callbacks at the writer's first tick, not
	 * now: a call that was already running when CUDA loaded the recorder
	 * (the program's first CUDA call may be cudaMallocAsync) went through
	 * no wrapper, and only the callback beneath it can record it. */
	found = res;
	unreported = 1;
	atomic_store(&started, 1);
}

int gp_alloc_patch_active(void)
{
	return atomic_load_explicit(&active, memory_order_relaxed);
}

static void update(const struct gp_got_result *res)
{
	/* off only while no call the callbacks record is under way: the
	 * program's first CUDA call, inside which CUDA loaded the recorder,
	 * may be a cudaMallocAsync that went through no wrapper and is still
	 * making its context at the first tick (tried again at the next) */
	int now = all_patched(res) && !(gp_cb_async_running() && !atomic_load(&active));
	if (now != atomic_exchange(&active, now) && gp_rec_running() &&
	    gp_callbacks_enable(subscriber, gp_rec_live(), now) != 0) {
		static atomic_flag said = ATOMIC_FLAG_INIT;
		if (!atomic_flag_test_and_set(&said))
			gp_rec_say("cannot switch CUPTI's allocation callbacks; stream-ordered allocations "
				   "may be missing from the trace");
	}
}

int gp_alloc_patch_tick(struct gp_alloc_capture *cap)
{
	struct gp_got_result res;

	if (!atomic_load_explicit(&started, memory_order_relaxed))
		return 0;
	if (gp_got_refresh(&slots, &res) == 1) {
		if (res.patched != found.patched || res.left != found.left || res.others != found.others)
			unreported = 1;
		found = res;
	}
	update(&found); /* switches the callbacks only when that changes */
	if (!unreported)
		return 0;
	unreported = 0;
	cap->slots = found;
	cap->callbacks_off = gp_alloc_patch_active();
	return 1;
}
