/* Which CUDA API calls become trace events, and their names.
 *
 * Recording every API call costs too much (PyTorch makes tens of thousands a
 * second), so only the calls that matter for attribution are enabled:
 * launches, allocations and frees, copies and sets, pool operations and
 * synchronization. They are chosen by name from CUPTI's own table so that
 * every version of an API (_v2, _ptsz, Ex...) is covered. */
#include "api_select.h"

#include "parts.h"

#include <cupti.h>
#include <stdlib.h>
#include <string.h>

static const char *const runtime_prefixes[] = {
	"cudaLaunch", "cudaGraphLaunch", "cudaMalloc", "cudaFree", "cudaHostAlloc",
	"cudaHostRegister", "cudaHostUnregister", "cudaMemcpy", "cudaMemset",
	"cudaMemPoolCreate", "cudaMemPoolDestroy", "cudaMemPoolTrimTo", "cudaMemPrefetch",
	"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
	"cudaDeviceReset",
	/* the range Nsight's users mark: the flight recorder dumps it */
	"cudaProfilerStart", "cudaProfilerStop", NULL,
};
static const char *const driver_prefixes[] = {
	"cuLaunch", "cuGraphLaunch", "cuMemAlloc", "cuMemFree", "cuMemHostAlloc",
	"cuMemHostRegister", "cuMemHostUnregister", "cuMemcpy", "cuMemset",
	"cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap", "cuMemPoolCreate",
	"cuMemPoolDestroy", "cuMemPoolTrimTo", "cuMemPrefetch", "cuCtxSynchronize",
	"cuStreamSynchronize", "cuEventSynchronize", "cuProfilerStart", "cuProfilerStop", NULL,
};
/* Calls that start GPU work: kernel and graph launches, and copies and
 * sets (flows link them to what they started). */
static const char *const kernel_launch_prefixes[] = {
	"cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch", NULL,
};
static const char *const copy_set_prefixes[] = {
	"cudaMemcpy", "cuMemcpy", "cudaMemset", "cuMemset", NULL,
};
/* Stream-ordered allocations and frees: while the API callbacks record them
 * (no "pools" part), each event says its thread and API itself, so their API
 * events would only cost the program (thousands a step in PyTorch's tensor
 * mode) and the trace. */
static const char *const stream_ordered_prefixes[] = {
	"cudaMallocAsync", "cudaMallocFromPoolAsync", "cudaFreeAsync",
	"cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemFreeAsync", NULL,
};

#define MAX_CBID 2048
struct api_info {
	char *name;      /* owned; version suffix removed */
	uint8_t traced;
	uint8_t launch;
	uint8_t kernel_launch; /* a kernel or graph launch (not a copy or set) */
	uint8_t stream_ordered; /* a stream-ordered allocation or free */
};
static struct api_info apis[2][MAX_CBID];

static int has_prefix(const char *s, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (strncmp(s, *prefixes, strlen(*prefixes)) == 0)
			return 1;
	return 0;
}

/* "cudaMalloc_v3020" -> "cudaMalloc"; "cuMemAlloc_v2" keeps "_v2" (a real API name). */
static char *trace_name(const char *cupti_name)
{
	char *n = strdup(cupti_name);
	if (!n)
		return NULL;
	char *v = strrchr(n, '_');
	if (v && v[1] == 'v' && strlen(v + 2) >= 4 && strspn(v + 2, "0123456789") == strlen(v + 2))
		*v = '\0';
	return n;
}

static void load_domain(int driver)
{
	CUpti_CallbackDomain dom = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	unsigned max = driver ? CUPTI_DRIVER_TRACE_CBID_SIZE : CUPTI_RUNTIME_TRACE_CBID_SIZE;
	const char *const *prefixes = driver ? driver_prefixes : runtime_prefixes;

	if (max > MAX_CBID)
		max = MAX_CBID;
	for (unsigned cbid = 1; cbid < max; cbid++) {
		const char *name = NULL;
		if (cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		struct api_info *a = &apis[driver][cbid];
		a->name = trace_name(name);
		if (!a->name)
			continue;
		a->traced = has_prefix(a->name, prefixes) && !strstr(a->name, "Attribute") &&
			    !strstr(a->name, "Access");
		a->kernel_launch = has_prefix(a->name, kernel_launch_prefixes);
		a->launch = a->kernel_launch || has_prefix(a->name, copy_set_prefixes);
		a->stream_ordered = has_prefix(a->name, stream_ordered_prefixes);
	}
}

int gp_api_select_apply(unsigned parts)
{
	static int loaded;
	int enabled = 0;
	int callbacks_record = gp_rec_by_callbacks(parts);
	for (int driver = 0; driver < 2; driver++) {
		if (!loaded)
			load_domain(driver);
		for (unsigned cbid = 1; cbid < MAX_CBID; cbid++) {
			const struct api_info *a = &apis[driver][cbid];
			if (!a->traced)
				continue;
			uint8_t on = (parts & GP_REC_API) &&
				     (!a->kernel_launch || (parts & GP_REC_LAUNCHES)) &&
				     !(a->stream_ordered && callbacks_record);
			CUptiResult r = driver ? cuptiActivityEnableDriverApi(cbid, on)
					       : cuptiActivityEnableRuntimeApi(cbid, on);
			if (r == CUPTI_SUCCESS && on)
				enabled++;
		}
	}
	loaded = 1;
	return enabled;
}

const char *gp_api_name(int driver, unsigned cbid)
{
	if (cbid >= MAX_CBID)
		return NULL;
	return apis[!!driver][cbid].name;
}

int gp_api_is_launch(int driver, unsigned cbid)
{
	return cbid < MAX_CBID && apis[!!driver][cbid].launch;
}
