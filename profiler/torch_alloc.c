/* The recorder's entry points for gpuprof's PyTorch allocator hook
 * (torch_alloc.h): called on the program's allocating threads, inside
 * PyTorch's allocator lock, they only copy the event into the host-event
 * queue (host_events.c); the writer thread decodes it (torch_decode.c). */
#include "torch_alloc.h"

#include "export.h"
#include "host_events.h"
#include "nvtx_inject.h"
#include "state.h"

#include <errno.h>
#include <string.h>

/* The event travels in the queue entry's inline name bytes: no allocation
 * on the program's thread. */
_Static_assert(sizeof(struct gp_ta_event) <= GP_HEV_INLINE_NAME,
	       "a PyTorch allocator event fits a host event's inline bytes");

GP_EXPORT int gpuprof_torch_alloc_event(const struct gp_ta_event *ev)
{
	struct gp_host_ev h;

	if (!ev || ev->version != GP_TA_VERSION || ev->type < GP_TA_ALLOC || ev->type >= GP_TA_TYPE_END)
		return -EINVAL;
	if (!gp_rec_running())
		return -ENODEV;
	memset(&h, 0, sizeof(h));
	h.ts = ev->ts;
	h.tid = ev->tid;
	h.type = GP_HEV_TORCH;
	return gp_hev_push(&h, (const char *)ev, sizeof(*ev));
}

GP_EXPORT int gpuprof_torch_stack(uint32_t id, const char *frames, size_t len)
{
	struct gp_host_ev h;

	if (!id || (!frames && len))
		return -EINVAL;
	if (!gp_rec_running())
		return -ENODEV;
	memset(&h, 0, sizeof(h));
	h.ts = gp_now();
	h.tid = gp_gettid();
	h.id = id;
	h.type = GP_HEV_TORCH_STACK;
	/* a text past the queue's 65535 bytes is cut: the decoder keeps its
	 * whole frames */
	return gp_hev_push(&h, frames, len);
}

GP_EXPORT int gpuprof_torch_in_module(void)
{
	return gp_nvtx_in_module();
}
