/* Host-side events (NVTX ranges, failed allocations, allocations and frees
 * recorded by the API callbacks) -> trace events. Writer thread only. */
#include "writer_ctx.h"

#include "api_callbacks.h"
#include "nvtx_inject.h"

#include <cupti.h>
#include <stdlib.h>
#include <string.h>

/* cb_live holds bytes and kind in the map's pointer value (a 64-bit
 * recorder: CUDA_INJECTION64_PATH) */
_Static_assert(sizeof(void *) == sizeof(uint64_t), "cb_live's values are 64 bits");

static const char *domain_name(uint64_t handle)
{
	if (!handle)
		return "default";
	const struct gp_nvtx_domain *d = (const void *)(uintptr_t)handle;
	return d->name ? d->name : "";
}

static void nvtx_args(struct gp_writer_ctx *w, const struct gp_host_ev *ev)
{
	gp_tw_args_begin(w->tw);
	gp_tw_arg_str(w->tw, GP_F_DOMAIN, domain_name(ev->domain));
	if (ev->flags & GP_HEVF_HAS_CATEGORY)
		gp_tw_arg_u64(w->tw, GP_F_CATEGORY, ev->category);
	if (ev->flags & GP_HEVF_HAS_COLOR)
		gp_tw_arg_hex(w->tw, GP_F_COLOR, ev->color);
	if (ev->flags & GP_HEVF_HAS_PAYLOAD) {
		if (ev->flags & GP_HEVF_PAYLOAD_DOUBLE) {
			double d;
			memcpy(&d, &ev->a, sizeof(d));
			gp_tw_arg_double(w->tw, GP_F_PAYLOAD, d);
		} else if (ev->flags & GP_HEVF_PAYLOAD_SIGNED) {
			gp_tw_arg_i64(w->tw, GP_F_PAYLOAD, (int64_t)ev->a);
		} else {
			gp_tw_arg_u64(w->tw, GP_F_PAYLOAD, ev->a);
		}
	}
}

static const char *cuda_error_name(int driver_api, int64_t r)
{
	if (r == 2)
		return driver_api ? "CUDA_ERROR_OUT_OF_MEMORY" : "cudaErrorMemoryAllocation";
	return NULL;
}

static void on_oom(struct gp_writer_ctx *w, const struct gp_host_ev *ev)
{
	const char *api = gp_memory_api_names[ev->api];
	gp_name_host_thread(w, ev->tid);
	gp_tw_begin(w->tw, GP_PH_OOM, GP_EV_OOM, GP_CAT_MEMORY, w->host_pid, ev->tid, gp_rel_ts(ev->ts));
	gp_tw_field_str(w->tw, GP_T_S, "p");
	gp_tw_args_begin(w->tw);
	gp_tw_arg_str(w->tw, GP_F_API, api);
	gp_tw_arg_u64(w->tw, GP_F_BYTES, ev->a);
	gp_tw_arg_u64(w->tw, GP_F_DEVICE, ev->device);
	if (ev->flags & GP_HEVF_HAS_MEMINFO) {
		gp_tw_arg_u64(w->tw, GP_F_FREE, ev->b);
		gp_tw_arg_u64(w->tw, GP_F_TOTAL, ev->c);
	}
	gp_tw_arg_i64(w->tw, GP_F_RESULT, ev->result);
	const char *err = cuda_error_name(api[0] == 'c' && api[1] == 'u' && api[2] != 'd', ev->result);
	if (err)
		gp_tw_arg_str(w->tw, GP_F_ERROR, err);
	gp_tw_end(w->tw);
}

/* An allocation or free recorded by the API callbacks (api_callbacks.c):
 * written as CUPTI's memory records are, without pool details. The queue is
 * in call order, so an allocation is always seen before its free; a free of
 * an address allocated before recording began has no size (0). */
static void on_call_memory(struct gp_writer_ctx *w, const struct gp_host_ev *ev)
{
	static const char *const kind_names[GP_CBK_COUNT] = {
		[GP_CBK_DEVICE] = GP_KIND_DEVICE,
		[GP_CBK_PINNED_HOST] = GP_KIND_PINNED_HOST,
		[GP_CBK_MANAGED] = GP_KIND_MANAGED,
	};
	static const uint8_t counters[GP_CBK_COUNT] = { GP_MC_DEVICE, GP_MC_PINNED_HOST, GP_MC_MANAGED };
	int alloc = ev->type == GP_HEV_ALLOC;
	unsigned kind = ev->mem_kind < GP_CBK_COUNT ? ev->mem_kind : GP_CBK_DEVICE;
	struct gp_memory_ev m = {
		.ts = ev->ts, .addr = ev->a, .bytes = ev->b, .corr = ev->id, .device = ev->device,
		.stream = (ev->flags & GP_HEVF_HAS_STREAM) ? (uint32_t)ev->c : CUPTI_INVALID_STREAM_ID,
		.alloc = (uint8_t)alloc, .async = (ev->flags & GP_HEVF_ASYNC) != 0,
		.thread = ev->tid, .api = gp_memory_api_names[ev->api],
	};
	/* freeing NULL does nothing (cudaFree(0) is a common way to start
	 * CUDA), nor does an allocation that returned NULL: not bad records */
	if (!ev->a)
		return;
	if (alloc) {
		/* bytes below 2^56 and kind + 1 in the top byte: never NULL */
		uint64_t v = ev->b | (uint64_t)(kind + 1) << 56;
		if (ev->b >> 56 || gp_u64map_put(&w->cb_live, ev->a, (void *)(uintptr_t)v) != 0)
			atomic_fetch_add(&gp_rec.dropped_host, 1);
	} else {
		/* not found: its kind is the freeing API's */
		uint64_t v = (uint64_t)(uintptr_t)gp_u64map_del(&w->cb_live, ev->a);
		if (v) {
			unsigned k = (unsigned)(v >> 56) - 1;
			m.bytes = v & ((1ull << 56) - 1);
			kind = k < GP_CBK_COUNT ? k : GP_CBK_DEVICE;
		}
	}
	m.kind = kind_names[kind];
	m.counter = counters[kind];
	if (alloc)
		m.caller = gp_caller_name(w, ev);
	gp_emit_memory(w, &m);
}

const char *gp_caller_name(struct gp_writer_ctx *w, const struct gp_host_ev *ev)
{
	size_t len;
	const char *name = gp_hev_name(ev, &len);
	if (!name || !len)
		return NULL;
	for (unsigned i = 0; i < w->ncallers; i++)
		if (strlen(w->caller_names[i]) == len && memcmp(w->caller_names[i], name, len) == 0)
			return w->caller_names[i];
	if (w->ncallers == GP_MAX_CALLERS)
		return NULL;
	char *copy = strndup(name, len);
	if (!copy)
		return NULL;
	w->caller_names[w->ncallers++] = copy;
	return copy;
}

/* The library behind an API call whose memory record CUPTI writes later. */
static void on_caller(struct gp_writer_ctx *w, const struct gp_host_ev *ev)
{
	const char *name = gp_caller_name(w, ev);
	if (!name || !ev->id)
		return;
	/* calls whose record never comes (a failed call has none) must not
	 * pile up: past the bound the waiting ones are let go */
	if (w->callers.count >= GP_MAX_CALLS_WAITING)
		gp_u64map_free(&w->callers);
	gp_u64map_put(&w->callers, ev->id, (void *)(uintptr_t)name);
}

/* PyTorch's allocated and reserved bytes beside "GPU memory" on the GPU's
 * process (torch_counters.h). */
static void on_torch_point(void *p, enum gp_tc_track track, const struct gp_tc_point *pt)
{
	struct gp_writer_ctx *w = p;
	/* both tracks are C events of category memory (trace_format.def) */
	gp_tw_begin(w->tw, GP_PH_TORCH_SAMPLED, gp_tc_names[track], GP_CAT_MEMORY,
		    gp_gpu_pid(w->host_pid, pt->device), 0, pt->ts);
	gp_tw_args_begin(w->tw);
	gp_tw_arg_u64(w->tw, GP_F_ALLOCATED, pt->allocated);
	gp_tw_arg_u64(w->tw, GP_F_RESERVED, pt->reserved);
	gp_tw_end(w->tw);
}

void gp_decode_host_events(struct gp_writer_ctx *w, struct gp_host_ev *evs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct gp_host_ev *ev = &evs[i];
		size_t len;
		const char *name = gp_hev_name(ev, &len);
		int64_t ts = gp_rel_ts(ev->ts);

		switch (ev->type) {
		case GP_HEV_PUSH:
			gp_name_host_thread(w, ev->tid);
			gp_tw_begin_n(w->tw, GP_PH_NVTX_PUSH, name, len, GP_CAT_NVTX, w->host_pid, ev->tid, ts);
			nvtx_args(w, ev);
			gp_tw_end(w->tw);
			break;
		case GP_HEV_POP:
			gp_tw_begin(w->tw, GP_PH_NVTX_POP, GP_EV_NVTX_POP, GP_CAT_NVTX, w->host_pid, ev->tid, ts);
			gp_tw_end(w->tw);
			break;
		case GP_HEV_START: {
			gp_name_host_thread(w, ev->tid);
			gp_tw_begin_n(w->tw, GP_PH_NVTX_START, name, len, GP_CAT_NVTX, w->host_pid, ev->tid, ts);
			gp_tw_field_u64(w->tw, GP_T_ID, ev->id);
			nvtx_args(w, ev);
			gp_tw_end(w->tw);
			/* Kept so the end event can carry the same name; bounded. */
			if (w->ranges.map.count < 65536) {
				char *copy = malloc(len + 1);
				if (copy) {
					memcpy(copy, name, len);
					copy[len] = '\0';
					gp_strmap_put(&w->ranges, ev->id, copy);
				}
			}
			break;
		}
		case GP_HEV_END: {
			const char *started = gp_strmap_get(&w->ranges, ev->id);
			gp_name_host_thread(w, ev->tid);
			gp_tw_begin(w->tw, GP_PH_NVTX_END, started ? started : "", GP_CAT_NVTX, w->host_pid, ev->tid, ts);
			gp_tw_field_u64(w->tw, GP_T_ID, ev->id);
			gp_tw_end(w->tw);
			gp_strmap_del(&w->ranges, ev->id);
			break;
		}
		case GP_HEV_MARK:
			gp_name_host_thread(w, ev->tid);
			gp_tw_begin_n(w->tw, GP_PH_NVTX_MARK, name, len, GP_CAT_NVTX, w->host_pid, ev->tid, ts);
			gp_tw_field_str(w->tw, GP_T_S, "t");
			nvtx_args(w, ev);
			gp_tw_end(w->tw);
			gp_tc_mark(&w->torch, name, len, ts, on_torch_point, w);
			break;
		case GP_HEV_THREAD_NAME:
			gp_u64set_add(&w->threads, ev->tid); /* the program's name wins */
			gp_tw_begin(w->tw, GP_PH_THREAD_NAME, GP_EV_THREAD_NAME, GP_CAT_NONE, w->host_pid, ev->tid, 0);
			gp_tw_args_begin(w->tw);
			gp_tw_arg_str_n(w->tw, GP_F_NAME, name, len);
			gp_tw_end(w->tw);
			break;
		case GP_HEV_OOM:
			on_oom(w, ev);
			break;
		case GP_HEV_ALLOC:
		case GP_HEV_FREE:
			on_call_memory(w, ev);
			break;
		case GP_HEV_TORCH:
			gp_decode_torch(w, ev);
			break;
		case GP_HEV_TORCH_STACK:
			gp_decode_torch_stack(w, ev);
			break;
		case GP_HEV_CALLER:
			on_caller(w, ev);
			break;
		default:
			break;
		}
	}
}
