/* Failed allocations. CUPTI writes no memory record for an allocation that
 * failed, and the requested size exists only in the API call's parameters, so
 * the exit callback of each allocation API looks at the result and, on
 * failure, queues an "oom" host event with the request and the device's free
 * and total memory at that moment. The success path costs one compare. */
#include "recorder.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <string.h>

/* Index into this table is gp_host_ev.api. */
const char *const gp_oom_api_names[] = {
	"cudaMalloc", "cudaMallocHost", "cudaHostAlloc", "cudaMallocManaged",
	"cudaMallocPitch", "cudaMallocAsync", "cudaMallocFromPoolAsync",
	"cuMemAlloc", "cuMemAllocPitch", "cuMemAllocHost", "cuMemHostAlloc",
	"cuMemAllocManaged", "cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemCreate",
};

enum param_layout { PTR_SIZE, RT_PITCH, DRV_PITCH, MEM_CREATE };

struct watched {
	int driver;
	unsigned cbid;
	uint16_t api;
	uint8_t layout;
};

static const struct watched watched[] = {
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 0, PTR_SIZE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, 1, PTR_SIZE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, 2, PTR_SIZE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000, 3, PTR_SIZE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020, 4, RT_PITCH },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, 5, PTR_SIZE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020, 5, PTR_SIZE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020, 6, PTR_SIZE },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020, 6, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc, 7, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, 7, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch, 8, DRV_PITCH },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, 8, DRV_PITCH },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost, 9, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, 9, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, 10, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc_v2, 10, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, 11, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, 12, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, 12, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync, 13, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz, 13, PTR_SIZE },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, 14, MEM_CREATE },
};
#define NWATCHED (sizeof(watched) / sizeof(watched[0]))

/* Runtime allocation calls run driver allocation calls inside them; the
 * failure is reported once, by the outermost call the program made. */
static __thread int in_runtime_alloc;
/* cuMemGetInfo is called from inside a callback; it must not re-enter. */
static __thread int in_callback;

typedef CUresult (*mem_get_info_fn)(size_t *, size_t *);
static mem_get_info_fn mem_get_info;

struct ptr_size_params {
	void *ptr;
	size_t size;
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
		/* Every other watched API takes (T **ptr, size_t size, ...). */
		const struct ptr_size_params *p = params;
		return p->size;
	}
	}
}

static void record_failure(const struct watched *w, const CUpti_CallbackData *cb, int64_t result)
{
	struct gp_host_ev ev;
	uint32_t device = 0;

	memset(&ev, 0, sizeof(ev));
	ev.ts = gp_now();
	ev.type = GP_HEV_OOM;
	ev.tid = gp_gettid();
	ev.api = w->api;
	ev.result = result;
	if (cb->context)
		cuptiGetDeviceId(cb->context, &device);
	ev.a = requested_bytes(w, cb->functionParams, &device);
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

void gp_callbacks_handler(void *userdata, int domain, unsigned cbid, const void *cbdata)
{
	const CUpti_CallbackData *cb = cbdata;
	int driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
	(void)userdata;

	if (in_callback || !gp_rec_running())
		return;
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API)
		return;
	const struct watched *w = find_watched(driver, cbid);
	if (!w)
		return;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (!driver)
			in_runtime_alloc++;
		return;
	}
	if (!driver && in_runtime_alloc > 0)
		in_runtime_alloc--;
	if (driver && in_runtime_alloc > 0)
		return;
	int64_t result = driver ? (int64_t)*(const CUresult *)cb->functionReturnValue
				: (int64_t)*(const cudaError_t *)cb->functionReturnValue;
	if (result != 0)
		record_failure(w, cb, result);
}

int gp_callbacks_enable(void *subscriber, int on)
{
	CUpti_SubscriberHandle sub = subscriber;
	/* libcuda may be loaded RTLD_LOCAL by cudart: ask for its handle. */
	void *cuda = mem_get_info ? NULL : dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (cuda)
		mem_get_info = (mem_get_info_fn)dlsym(cuda, "cuMemGetInfo_v2");
	for (size_t i = 0; i < NWATCHED; i++) {
		CUpti_CallbackDomain dom = watched[i].driver ? CUPTI_CB_DOMAIN_DRIVER_API
							     : CUPTI_CB_DOMAIN_RUNTIME_API;
		CUptiResult r = cuptiEnableCallback(on ? 1 : 0, sub, dom, watched[i].cbid);
		if (r != CUPTI_SUCCESS)
			return (int)r;
	}
	return 0;
}
