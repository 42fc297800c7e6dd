/* API-exit callbacks of the allocation calls.
 *
 * Failed allocations: CUPTI writes no memory record for an allocation that
 * failed, and the requested size exists only in the API call's parameters, so
 * the exit callback of each allocation API looks at the result and, when it
 * ran out of memory, queues an "oom" host event with the request and the device's free
 * and total memory at that moment.
 *
 * Allocations and frees without CUPTI's memory records: CUPTI records
 * stream-ordered allocations (cudaMallocAsync and its kin) only with its
 * memory pool records on, which cost about 1.5-3 µs of the program's time
 * per allocation and free (bench/op_cost and bench/launch_cost.py on the
 * H100's host), in PyTorch's tensor mode thousands a step. Without the
 * "pools" part the recorder switches pool records on and off at start, after
 * which CUPTI 13.0 records no allocation made through an API at all (only
 * module globals): so these callbacks record them all, as host events with
 * the address, size, kind, device, stream, calling thread and API. They are
 * taken at the driver level only: a runtime call (cudaMalloc) runs its driver
 * call (cuMemAlloc_v2) inside it, and CUPTI calls back for both, each at
 * entry and exit; the driver level alone sees the runtime's calls and the
 * program's own driver calls, at half the cost (about 1.5 µs less per
 * allocation and free). Such an event's corr is the driver call's, which no
 * API event has: it carries its thread and API itself. Libraries' calls of
 * cudaMallocAsync and cudaFreeAsync are recorded in the calls instead, where
 * alloc_patch.c can patch them, with the recording at the end of this file. */
#include "api_callbacks.h"

#include "context_devices.h"
#include "host_events.h"
#include "parts.h"
#include "state.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <string.h>

/* The allocation and free APIs the callbacks watch; gp_host_ev.api (the
 * watched[] api numbers) indexes gp_memory_api_names. Each name is placed by
 * its enum, so that a number cannot name the wrong call. */
enum memory_api {
	API_CUDA_MALLOC, API_CUDA_MALLOC_HOST, API_CUDA_HOST_ALLOC,
	API_CUDA_MALLOC_MANAGED, API_CUDA_MALLOC_PITCH, API_CUDA_MALLOC_ASYNC,
	API_CUDA_MALLOC_FROM_POOL_ASYNC, API_CU_MEM_ALLOC,
	API_CU_MEM_ALLOC_PITCH, API_CU_MEM_ALLOC_HOST, API_CU_MEM_HOST_ALLOC,
	API_CU_MEM_ALLOC_MANAGED, API_CU_MEM_ALLOC_ASYNC,
	API_CU_MEM_ALLOC_FROM_POOL_ASYNC, API_CU_MEM_CREATE,
	API_CUDA_FREE_ASYNC, API_CU_MEM_FREE_ASYNC, API_CU_MEM_FREE,
	API_CU_MEM_FREE_HOST, API_CU_MEM_MAP, API_COUNT,
};
const char *const gp_memory_api_names[API_COUNT] = {
	[API_CUDA_MALLOC] = "cudaMalloc",
	[API_CUDA_MALLOC_HOST] = "cudaMallocHost",
	[API_CUDA_HOST_ALLOC] = "cudaHostAlloc",
	[API_CUDA_MALLOC_MANAGED] = "cudaMallocManaged",
	[API_CUDA_MALLOC_PITCH] = "cudaMallocPitch",
	[API_CUDA_MALLOC_ASYNC] = "cudaMallocAsync",
	[API_CUDA_MALLOC_FROM_POOL_ASYNC] = "cudaMallocFromPoolAsync",
	[API_CU_MEM_ALLOC] = "cuMemAlloc",
	[API_CU_MEM_ALLOC_PITCH] = "cuMemAllocPitch",
	[API_CU_MEM_ALLOC_HOST] = "cuMemAllocHost",
	[API_CU_MEM_HOST_ALLOC] = "cuMemHostAlloc",
	[API_CU_MEM_ALLOC_MANAGED] = "cuMemAllocManaged",
	[API_CU_MEM_ALLOC_ASYNC] = "cuMemAllocAsync",
	[API_CU_MEM_ALLOC_FROM_POOL_ASYNC] = "cuMemAllocFromPoolAsync",
	[API_CU_MEM_CREATE] = "cuMemCreate",
	[API_CUDA_FREE_ASYNC] = "cudaFreeAsync",
	[API_CU_MEM_FREE_ASYNC] = "cuMemFreeAsync",
	[API_CU_MEM_FREE] = "cuMemFree",
	[API_CU_MEM_FREE_HOST] = "cuMemFreeHost",
	[API_CU_MEM_MAP] = "cuMemMap",
};
_Static_assert(sizeof(gp_memory_api_names) / sizeof(gp_memory_api_names[0]) == API_COUNT,
	       "one name per memory_api");

__thread int gp_cb_wrapped;

/* PTR_SIZE: (T **ptr, size_t size, ...) for allocations, (T ptr, stream)
 * for frees; POOL_ALLOC: (T **ptr, size_t size, pool, stream). */
enum param_layout { PTR_SIZE, RT_PITCH, DRV_PITCH, MEM_CREATE, POOL_ALLOC };

/* ALLOC and FREE: not stream-ordered. MAP: a mapping of physical memory
 * (cuMemMap), which CUPTI's memory records take for the allocation (XLA's
 * arena, expandable segments): only its caller is recorded. */
enum role { ALLOC, ALLOC_ASYNC, FREE_ASYNC, FREE, MAP };

struct watched {
	int driver;
	unsigned cbid;
	uint16_t api;
	uint8_t layout;
	uint8_t role;
	uint8_t per_thread; /* a _ptsz call: stream 0 is the per-thread stream */
	uint8_t records;    /* recorded on success (driver level, 64-bit pointers) */
	uint8_t kind;       /* enum gp_cb_kind of what it allocates */
};

static const struct watched watched[] = {
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, API_CUDA_MALLOC, PTR_SIZE, ALLOC, 0, 0, GP_CBK_DEVICE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, API_CUDA_MALLOC_HOST, PTR_SIZE, ALLOC, 0, 0, GP_CBK_PINNED_HOST },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, API_CUDA_HOST_ALLOC, PTR_SIZE, ALLOC, 0, 0, GP_CBK_PINNED_HOST },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000, API_CUDA_MALLOC_MANAGED, PTR_SIZE, ALLOC, 0, 0, GP_CBK_MANAGED },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020, API_CUDA_MALLOC_PITCH, RT_PITCH, ALLOC, 0, 0, GP_CBK_DEVICE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, API_CUDA_MALLOC_ASYNC, PTR_SIZE, ALLOC_ASYNC, 0, 0, GP_CBK_DEVICE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020, API_CUDA_MALLOC_ASYNC, PTR_SIZE, ALLOC_ASYNC, 1, 0, GP_CBK_DEVICE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020, API_CUDA_MALLOC_FROM_POOL_ASYNC, POOL_ALLOC, ALLOC_ASYNC, 0, 0, GP_CBK_DEVICE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020, API_CUDA_MALLOC_FROM_POOL_ASYNC, POOL_ALLOC, ALLOC_ASYNC, 1, 0, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc, API_CU_MEM_ALLOC, PTR_SIZE, ALLOC, 0, 0, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, API_CU_MEM_ALLOC, PTR_SIZE, ALLOC, 0, 1, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch, API_CU_MEM_ALLOC_PITCH, DRV_PITCH, ALLOC, 0, 0, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, API_CU_MEM_ALLOC_PITCH, DRV_PITCH, ALLOC, 0, 1, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost, API_CU_MEM_ALLOC_HOST, PTR_SIZE, ALLOC, 0, 0, GP_CBK_PINNED_HOST },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, API_CU_MEM_ALLOC_HOST, PTR_SIZE, ALLOC, 0, 1, GP_CBK_PINNED_HOST },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, API_CU_MEM_HOST_ALLOC, PTR_SIZE, ALLOC, 0, 1, GP_CBK_PINNED_HOST },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc_v2, API_CU_MEM_HOST_ALLOC, PTR_SIZE, ALLOC, 0, 1, GP_CBK_PINNED_HOST },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, API_CU_MEM_ALLOC_MANAGED, PTR_SIZE, ALLOC, 0, 1, GP_CBK_MANAGED },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, API_CU_MEM_ALLOC_ASYNC, PTR_SIZE, ALLOC_ASYNC, 0, 1, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, API_CU_MEM_ALLOC_ASYNC, PTR_SIZE, ALLOC_ASYNC, 1, 1, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync, API_CU_MEM_ALLOC_FROM_POOL_ASYNC, POOL_ALLOC, ALLOC_ASYNC, 0, 1, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz, API_CU_MEM_ALLOC_FROM_POOL_ASYNC, POOL_ALLOC, ALLOC_ASYNC, 1, 1, GP_CBK_DEVICE },
	/* a physical allocation without an address: its failures only */
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, API_CU_MEM_CREATE, MEM_CREATE, ALLOC, 0, 0, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, API_CU_MEM_FREE_ASYNC, PTR_SIZE, FREE_ASYNC, 0, 1, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz, API_CU_MEM_FREE_ASYNC, PTR_SIZE, FREE_ASYNC, 1, 1, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, API_CU_MEM_FREE, PTR_SIZE, FREE, 0, 1, GP_CBK_DEVICE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, API_CU_MEM_FREE_HOST, PTR_SIZE, FREE, 0, 1, GP_CBK_PINNED_HOST },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemMap, API_CU_MEM_MAP, PTR_SIZE, MAP, 0, 0, GP_CBK_DEVICE },
};
#define NWATCHED (sizeof(watched) / sizeof(watched[0]))

/* Runtime allocation calls run driver allocation calls inside them; the
 * failure is reported once, by the outermost call the program made. */
static __thread int in_runtime_alloc;
/* cuMemGetInfo is called from inside a callback; it must not re-enter. */
static __thread int in_callback;
/* The last context's device and the last stream's id, per thread: looking
 * them up costs a call into CUPTI, twice per allocation and free. A context
 * or stream handle can come back for a new one once destroyed, so every
 * destruction moves the generation on and the cached values are dropped. */
static _Atomic uint64_t handle_gen = 1;
static _Atomic int caching; /* CUPTI tells us of destructions: caches kept */
static __thread uint64_t cache_gen;
static __thread CUcontext last_ctx;
static __thread uint32_t last_ctx_device;
static __thread struct {
	CUcontext ctx;
	void *stream;
	uint8_t per_thread;
	uint32_t id;
} last_stream;

typedef CUresult (*mem_get_info_fn)(size_t *, size_t *);
static mem_get_info_fn mem_get_info;
/* For the patched calls, which have no CUPTI context at hand. */
static CUresult (*ctx_get_current)(CUcontext *);
static CUresult (*stream_get_ctx)(CUstream, CUcontext *);
static __thread struct {
	void *stream; /* an explicit stream (not 0, legacy or per-thread) */
	CUcontext ctx;
} last_stream_ctx;
/* Whether allocations and frees are recorded here (see the top). */
static _Atomic int tracking;
/* Stream-ordered allocations and frees under way that no wrapper of
 * alloc_patch.c records (entered, not yet returned): the program's first
 * CUDA call, inside which CUDA loaded the recorder, may be one, and its
 * context can take longer to make than a writer tick. alloc_patch.c turns
 * their callbacks off only while none runs: off, a call's return would go
 * unseen, and the allocation with it. */
static _Atomic int async_running;
/* A stream-ordered call came back, or one went through a wrapper: the
 * program's first call, if it was one, no longer needs its callback (it
 * made its context first: its own cuMemAllocAsync comes after the first
 * writer tick when that takes long). */
static _Atomic int async_seen;

struct ptr_size_params {
	void *ptr;
	size_t size;
	void *stream;
};
struct pool_alloc_params {
	void *ptr;
	size_t size;
	void *pool;
	void *stream;
};
struct free_params {
	uint64_t ptr; /* void * or CUdeviceptr: 64 bits either way */
	void *stream;
};

static const struct watched *find_watched(int driver, unsigned cbid)
{
	for (size_t i = 0; i < NWATCHED; i++)
		if (watched[i].driver == driver && watched[i].cbid == cbid)
			return &watched[i];
	return NULL;
}

static uint64_t requested_bytes(const struct watched *w, const void *params, uint32_t *device)
{
	switch (w->layout) {
	case RT_PITCH: {
		const cudaMallocPitch_v3020_params *p = params;
		return (uint64_t)p->width * p->height;
	}
	case DRV_PITCH: {
		const cuMemAllocPitch_v2_params *p = params;
		return (uint64_t)p->WidthInBytes * p->Height;
	}
	case MEM_CREATE: {
		const cuMemCreate_params *p = params;
		if (p->prop && p->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
			*device = (uint32_t)p->prop->location.id;
		return p->size;
	}
	default: {
		/* Every other watched allocation takes (T **ptr, size_t size, ...). */
		const struct ptr_size_params *p = params;
		return p->size;
	}
	}
}

/* Drops this thread's cached device and stream id if a context or stream
 * was destroyed since they were looked up. */
static void check_cache(void)
{
	uint64_t gen = atomic_load_explicit(&handle_gen, memory_order_acquire);
	if (cache_gen != gen || !atomic_load_explicit(&caching, memory_order_relaxed)) {
		last_ctx = NULL;
		last_stream.ctx = NULL;
		last_stream_ctx.stream = NULL;
		cache_gen = gen;
	}
}

/* CUPTI's id of a stream; 0 or -1 when CUPTI has none. */
static int stream_id(CUcontext ctx, void *stream, uint8_t per_thread, uint32_t *id)
{
	if (last_stream.ctx != ctx || last_stream.stream != stream ||
	    last_stream.per_thread != per_thread) {
		uint32_t sid;
		if (!ctx || cuptiGetStreamIdEx(ctx, (CUstream)stream, per_thread, &sid) != CUPTI_SUCCESS)
			return -1;
		last_stream.ctx = ctx;
		last_stream.stream = stream;
		last_stream.per_thread = per_thread;
		last_stream.id = sid;
	}
	*id = last_stream.id;
	return 0;
}

static uint32_t context_device(CUcontext ctx)
{
	if (ctx != last_ctx) {
		uint32_t d = 0;
		if (!ctx || cuptiGetDeviceId(ctx, &d) != CUPTI_SUCCESS)
			return 0;
		last_ctx = ctx;
		last_ctx_device = d;
	}
	return last_ctx_device;
}

/* An "oom" host event: the request, and the device's free and total memory
 * now. */
static void push_failure(uint16_t api, uint64_t bytes, uint32_t device, int64_t result)
{
	struct gp_host_ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.ts = gp_now();
	ev.type = GP_HEV_OOM;
	ev.tid = gp_gettid();
	ev.api = api;
	ev.result = result;
	ev.a = bytes;
	ev.device = device;
	size_t free_b = 0, total_b = 0;
	in_callback = 1;
	if (mem_get_info && mem_get_info(&free_b, &total_b) == CUDA_SUCCESS) {
		ev.b = free_b;
		ev.c = total_b;
		ev.flags |= GP_HEVF_HAS_MEMINFO;
	}
	in_callback = 0;
	gp_hev_push(&ev, NULL, 0);
}

/* Whether a failed allocation becomes an "oom" event: out of memory only,
 * the driver's code or the runtime's (both 2). Other failures are not the
 * program running out: cudart's first call fails inside on no context and
 * retries. */
_Static_assert((int)CUDA_ERROR_OUT_OF_MEMORY == (int)cudaErrorMemoryAllocation,
	       "one code for out of memory");
static int records_failure(int64_t result)
{
	return result == CUDA_ERROR_OUT_OF_MEMORY && (gp_rec_live() & GP_REC_OOM);
}

static void record_failure(const struct watched *w, const CUpti_CallbackData *cb, int64_t result)
{
	check_cache();
	uint32_t device = context_device(cb->context);
	uint64_t bytes = requested_bytes(w, cb->functionParams, &device);
	push_failure(w->api, bytes, device, result);
}

/* The stream parameter of a stream-ordered call (only those have one). */
static void *call_stream(const struct watched *w, const void *params)
{
	if (w->role == FREE_ASYNC)
		return ((const struct free_params *)params)->stream;
	if (w->layout == POOL_ALLOC)
		return ((const struct pool_alloc_params *)params)->stream;
	return ((const struct ptr_size_params *)params)->stream;
}

/* The part of an allocation's or free's event that the callbacks and the
 * patched calls share; the caller has run check_cache(). */
static void begin_call_event(struct gp_host_ev *ev, uint16_t api, uint8_t kind, CUcontext ctx)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts = gp_now();
	ev->tid = gp_gettid();
	ev->api = api;
	ev->mem_kind = kind;
	ev->device = context_device(ctx);
}

/* A stream-ordered call's flag and stream id. */
static void set_call_stream(struct gp_host_ev *ev, CUcontext ctx, void *stream, uint8_t per_thread)
{
	uint32_t sid;
	ev->flags |= GP_HEVF_ASYNC;
	if (stream_id(ctx, stream, per_thread, &sid) == 0) {
		ev->c = sid;
		ev->flags |= GP_HEVF_HAS_STREAM;
	}
}

#define CALLER_MAX 256

/* Objects that are CUDA itself, or gpuprof: the caller is past them. */
static int is_cuda_or_us(const char *base)
{
	static const char *const prefixes[] = { "libcuda.so", "libcudart.so", "libcupti.so",
						"libgpuprof_inject.so", "libc.so", NULL };
	for (size_t i = 0; prefixes[i]; i++)
		if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* The library that made an allocation call: the first object on this
 * thread's stack outside CUDA's libraries and gpuprof, named by its path
 * inside a Python package directory (cupy_backends/cuda/api/runtime...so,
 * jaxlib/...), else by its file name (libcublasLt.so.13, libnccl.so.2).
 * Only for calls that are not stream-ordered: an unwind costs a few
 * microseconds, beside a cudaMalloc's tens, but would cost tensor mode's
 * thousands of cudaMallocAsync calls a step. Length written (0: none). */
static size_t caller_object(char *out, size_t cap)
{
	void *frames[32];
	int n = backtrace(frames, 32);
	for (int i = 1; i < n; i++) {
		Dl_info info;
		/* a return address: the call instruction is just before it */
		if (!dladdr((char *)frames[i] - 1, &info) || !info.dli_fname)
			continue;
		const char *base = strrchr(info.dli_fname, '/');
		base = base ? base + 1 : info.dli_fname;
		if (!*base || is_cuda_or_us(base))
			continue;
		const char *name = base;
		const char *pkg = strstr(info.dli_fname, "-packages/");
		if (pkg)
			name = pkg + strlen("-packages/");
		size_t len = strnlen(name, cap);
		memcpy(out, name, len);
		return len;
	}
	return 0;
}

/* An allocation or free that succeeded: a GP_HEV_ALLOC (a: address, b:
 * bytes) or GP_HEV_FREE (a: address) host event; stream-ordered ones with
 * GP_HEVF_ASYNC and their stream (c). */
static void record_call(const struct watched *w, const CUpti_CallbackData *cb)
{
	struct gp_host_ev ev;

	check_cache();
	begin_call_event(&ev, w->api, w->kind, cb->context);
	ev.id = cb->correlationId;
	if (w->role == FREE_ASYNC || w->role == FREE) {
		const struct free_params *p = cb->functionParams;
		ev.type = GP_HEV_FREE;
		ev.a = p->ptr;
	} else if (w->layout == DRV_PITCH) {
		const cuMemAllocPitch_v2_params *p = cb->functionParams;
		ev.type = GP_HEV_ALLOC;
		ev.a = p->dptr ? (uint64_t)*p->dptr : 0;
		ev.b = p->pPitch ? (uint64_t)*p->pPitch * p->Height : 0;
	} else {
		/* PTR_SIZE and POOL_ALLOC both begin (T **ptr, size_t size) */
		const struct ptr_size_params *p = cb->functionParams;
		ev.type = GP_HEV_ALLOC;
		ev.a = p->ptr ? (uint64_t)(uintptr_t) * (void **)p->ptr : 0;
		ev.b = p->size;
	}
	char caller[CALLER_MAX];
	size_t caller_len = 0;
	if (w->role == ALLOC_ASYNC || w->role == FREE_ASYNC)
		set_call_stream(&ev, cb->context, call_stream(w, cb->functionParams), w->per_thread);
	else if (w->role == ALLOC)
		caller_len = caller_object(caller, sizeof(caller));
	gp_hev_push(&ev, caller, caller_len);
}

/* The caller found for the driver call inside a runtime allocation call,
 * kept for the runtime call's own exit: the same stack above them both. */
static __thread char inner_caller[CALLER_MAX];
static __thread size_t inner_caller_len;
static __thread int inner_caller_set;

/* For a call whose allocation CUPTI's memory record will say: which library
 * made it (GP_HEV_CALLER), by the call's correlation id. inner: a driver
 * call inside a runtime one (its caller is kept for the runtime call). */
static void record_caller(const CUpti_CallbackData *cb, int driver, int inner)
{
	char caller[CALLER_MAX];
	size_t len;
	if (!driver && inner_caller_set) {
		len = inner_caller_len;
		memcpy(caller, inner_caller, len);
		inner_caller_set = 0;
	} else {
		len = caller_object(caller, sizeof(caller));
	}
	if (inner) {
		memcpy(inner_caller, caller, len);
		inner_caller_len = len;
		inner_caller_set = 1;
	}
	if (!len)
		return;
	struct gp_host_ev ev;
	memset(&ev, 0, sizeof(ev));
	ev.ts = gp_now();
	ev.type = GP_HEV_CALLER;
	ev.id = cb->correlationId;
	ev.tid = gp_gettid();
	gp_hev_push(&ev, caller, len);
}

void gp_callbacks_handler(void *userdata, int domain, unsigned cbid, const void *cbdata)
{
	const CUpti_CallbackData *cb = cbdata;
	int driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
	(void)userdata;

	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		/* even while not recording: the caches outlive a pause */
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
			gp_ctxdev_created(cbdata);
			return;
		}
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING ||
		    cbid == CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING)
			atomic_fetch_add_explicit(&handle_gen, 1, memory_order_release);
		return;
	}
	if (in_callback || !gp_rec_running())
		return;
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API)
		return;
	if (driver && gp_cb_wrapped) {
		if (!atomic_load_explicit(&async_seen, memory_order_relaxed))
			atomic_store_explicit(&async_seen, 1, memory_order_release);
		return; /* a patched call (alloc_patch.c): it records itself */
	}
	const struct watched *w = find_watched(driver, cbid);
	if (!w)
		return;
	int async = driver && (w->api == API_CU_MEM_ALLOC_ASYNC || w->api == API_CU_MEM_FREE_ASYNC);
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (!driver) {
			in_runtime_alloc++;
			inner_caller_set = 0;
		}
		if (async)
			atomic_fetch_add_explicit(&async_running, 1, memory_order_acq_rel);
		return;
	}
	if (async) {
		atomic_store_explicit(&async_seen, 1, memory_order_release);
		/* an exit whose entry came before the callback was on: none */
		int n = atomic_load_explicit(&async_running, memory_order_acquire);
		while (n > 0 && !atomic_compare_exchange_weak(&async_running, &n, n - 1))
			;
	}
	if (!driver && in_runtime_alloc > 0)
		in_runtime_alloc--;
	if (driver && in_runtime_alloc > 0) {
		/* inside cudaMalloc: CUPTI's memory record may carry this
		 * call's id rather than the runtime call's, so both say it */
		if (w->role == ALLOC && *(const CUresult *)cb->functionReturnValue == CUDA_SUCCESS &&
		    !atomic_load_explicit(&tracking, memory_order_relaxed))
			record_caller(cb, 1, 1);
		return;
	}
	int64_t result = driver ? (int64_t)*(const CUresult *)cb->functionReturnValue
				: (int64_t)*(const cudaError_t *)cb->functionReturnValue;
	if (result == 0) {
		if (atomic_load_explicit(&tracking, memory_order_relaxed)) {
			if (w->records)
				record_call(w, cb);
		} else if (w->role == ALLOC || w->role == MAP) {
			record_caller(cb, driver, 0);
		}
	} else if ((w->role == ALLOC || w->role == ALLOC_ASYNC) && records_failure(result)) {
		record_failure(w, cb, result);
	}
}

int gp_cb_async_running(void)
{
	return !atomic_load_explicit(&async_seen, memory_order_acquire) ||
	       atomic_load_explicit(&async_running, memory_order_acquire) > 0;
}

int gp_callbacks_tracking(void)
{
	return atomic_load_explicit(&tracking, memory_order_relaxed);
}

void gp_cb_find_driver(void)
{
	/* libcuda may be loaded RTLD_LOCAL by cudart: ask for its handle. */
	void *cuda = mem_get_info ? NULL : dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (cuda) {
		*(void **)&ctx_get_current = dlsym(cuda, "cuCtxGetCurrent");
		*(void **)&stream_get_ctx = dlsym(cuda, "cuStreamGetCtx");
		mem_get_info = (mem_get_info_fn)dlsym(cuda, "cuMemGetInfo_v2");
	}
}

int gp_callbacks_enable(void *subscriber, unsigned parts, int async_patched)
{
	CUpti_SubscriberHandle sub = subscriber;
	int oom = !!(parts & GP_REC_OOM);
	int track = gp_rec_by_callbacks(parts);
	gp_cb_find_driver();
	atomic_store(&tracking, track);
	/* destructions of contexts and streams end what the caches hold */
	static const CUpti_CallbackId destroyed[] = { CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
						      CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING };
	int told = 1;
	for (size_t i = 0; i < sizeof(destroyed) / sizeof(destroyed[0]); i++)
		told &= cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, destroyed[i]) == CUPTI_SUCCESS;
	atomic_store(&caching, told); /* else looked up every time */
	/* each new context's device, for CUPTI's memory records (context_devices.c);
	 * without it they keep the device CUPTI wrote */
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	for (size_t i = 0; i < NWATCHED; i++) {
		const struct watched *wt = &watched[i];
		CUpti_CallbackDomain dom = wt->driver ? CUPTI_CB_DOMAIN_DRIVER_API
						      : CUPTI_CB_DOMAIN_RUNTIME_API;
		/* Failures of any allocation, at both levels (the runtime's name
		 * wins, see in_runtime_alloc); while the callbacks record the
		 * calls, at the driver level only (see the top), where failures
		 * are then reported under the driver API's name. */
		int fails = wt->role == ALLOC || wt->role == ALLOC_ASYNC;
		int on = track ? wt->driver && (wt->records || (fails && oom)) : fails && oom;
		if (wt->role == MAP)
			on = !track; /* its caller, for CUPTI's record of it */
		if (track && wt->driver && (wt->api == API_CU_MEM_ALLOC_ASYNC ||
					    wt->api == API_CU_MEM_FREE_ASYNC) && async_patched)
			on = 0; /* the patched calls record them (alloc_patch.c) */
		CUptiResult r = cuptiEnableCallback(on ? 1 : 0, sub, dom, wt->cbid);
		if (r != CUPTI_SUCCESS)
			return (int)r;
	}
	return 0;
}

/* ---- Recording for the patched calls (alloc_patch.c) ---- */

/* The context a stream-ordered call ran in: the stream's; for the special
 * handles (0, legacy, per-thread) the current one. NULL if unknown. */
static CUcontext call_context(void *stream)
{
	CUcontext ctx = NULL;
	if ((uintptr_t)stream <= (uintptr_t)CU_STREAM_PER_THREAD) {
		if (ctx_get_current && ctx_get_current(&ctx) != CUDA_SUCCESS)
			return NULL;
		return ctx;
	}
	if (last_stream_ctx.stream == stream && last_stream_ctx.ctx)
		return last_stream_ctx.ctx;
	if (!stream_get_ctx || stream_get_ctx((CUstream)stream, &ctx) != CUDA_SUCCESS)
		return NULL;
	last_stream_ctx.stream = stream;
	last_stream_ctx.ctx = ctx;
	return ctx;
}

void gp_cb_record_async(int is_free, uint64_t addr, uint64_t bytes, void *stream,
			uint8_t per_thread)
{
	struct gp_host_ev ev;

	check_cache();
	CUcontext ctx = call_context(stream);
	begin_call_event(&ev, is_free ? API_CUDA_FREE_ASYNC : API_CUDA_MALLOC_ASYNC, GP_CBK_DEVICE, ctx);
	ev.type = is_free ? GP_HEV_FREE : GP_HEV_ALLOC;
	ev.a = addr;
	ev.b = is_free ? 0 : bytes;
	set_call_stream(&ev, ctx, stream, per_thread);
	gp_hev_push(&ev, NULL, 0);
}

void gp_cb_record_async_failure(uint64_t bytes, void *stream, int64_t result)
{
	if (!records_failure(result))
		return;
	check_cache();
	push_failure(API_CUDA_MALLOC_ASYNC, bytes, context_device(call_context(stream)), result);
}
