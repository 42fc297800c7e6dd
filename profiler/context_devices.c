/* The devices of the process's CUDA contexts: filled when a context is
 * created (the resource callback, any thread), read by the writer thread to
 * place CUPTI's memory records. CUPTI 13.0 gives module globals
 * (device_static) deviceId 0 whatever device loaded the module (seen on a
 * host of two GPUs: every rank's globals on GPU 0, its one context on GPU
 * 1), and no context id to tell by: a process whose contexts are all on one
 * device loaded them there. */
#include "context_devices.h"

#include <cupti.h>
#include <stdatomic.h>

/* context id -> device + 1 (0: not known). CUPTI numbers contexts from 1
 * upwards in a process; ids past the table are looked up as unknown. */
#define GP_MAX_CONTEXTS 1024
static _Atomic uint32_t context_device[GP_MAX_CONTEXTS];
/* a bit per device (up to 64) that has a context of this process */
static _Atomic uint64_t devices_with_context;

void gp_ctxdev_created(const void *resource_data)
{
	const CUpti_ResourceData *rd = resource_data;
	uint32_t id = 0, dev = 0;

	if (!rd || !rd->context || cuptiGetDeviceId(rd->context, &dev) != CUPTI_SUCCESS)
		return;
	if (dev < 64)
		atomic_fetch_or_explicit(&devices_with_context, 1ull << dev, memory_order_release);
	if (cuptiGetContextId(rd->context, &id) == CUPTI_SUCCESS && id && id < GP_MAX_CONTEXTS)
		atomic_store_explicit(&context_device[id], dev + 1, memory_order_release);
}

int gp_ctxdev_device(uint32_t context_id, uint32_t *device)
{
	uint32_t v = 0;
	uint64_t devs;

	if (context_id && context_id < GP_MAX_CONTEXTS)
		v = atomic_load_explicit(&context_device[context_id], memory_order_acquire);
	if (v) {
		*device = v - 1;
		return 1;
	}
	/* no context said: the one device with contexts, if there is one */
	devs = atomic_load_explicit(&devices_with_context, memory_order_acquire);
	if (!devs || (devs & (devs - 1)))
		return 0;
	*device = (uint32_t)__builtin_ctzll(devs);
	return 1;
}
