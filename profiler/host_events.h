/* Host-side events: NVTX, failed allocations, allocations and frees by the
 * callbacks, PyTorch's allocator (host_events.c): copied on the program's
 * threads into a bounded queue that the writer thread swaps out. */
#ifndef GPUPROF_HOST_EVENTS_H
#define GPUPROF_HOST_EVENTS_H

#include <stddef.h>
#include <stdint.h>

enum gp_host_ev_type {
	GP_HEV_PUSH, GP_HEV_POP, GP_HEV_START, GP_HEV_END, GP_HEV_MARK,
	GP_HEV_THREAD_NAME, GP_HEV_OOM, GP_HEV_DOMAIN_NAME, GP_HEV_ALLOC, GP_HEV_FREE,
	/* from gpuprof's PyTorch allocator hook (torch_alloc.c): TORCH's name
	 * bytes are a struct gp_ta_event; TORCH_STACK's are a stack's text,
	 * id its id */
	GP_HEV_TORCH, GP_HEV_TORCH_STACK,
	/* the library that made the allocation API call numbered id: its
	 * object's file name (name), for a CUPTI memory record of that call */
	GP_HEV_CALLER,
};
#define GP_HEV_INLINE_NAME 96
struct gp_host_ev {
	uint64_t ts;
	uint64_t id;        /* start/end range id; domain handle for DOMAIN_NAME;
			     * ALLOC/FREE/CALLER: the API call's correlation id
			     * (ALLOC's name: the calling library, as CALLER's) */
	uint64_t domain;    /* NVTX domain handle (0 = default domain) */
	uint64_t a, b, c;   /* OOM: requested bytes, free, total. NVTX: payload.
			     * ALLOC/FREE: address, bytes (ALLOC), stream id */
	int64_t result;     /* OOM: CUDA error code */
	uint32_t tid;
	uint32_t device;
	uint32_t category;
	uint32_t color;
	uint16_t api;       /* OOM, ALLOC, FREE: index into gp_memory_api_names */
	uint8_t mem_kind;   /* ALLOC, FREE: enum gp_cb_kind of the API */
	uint8_t type;
	uint8_t flags;      /* GP_HEVF_* */
	uint16_t name_len;
	char name[GP_HEV_INLINE_NAME]; /* not NUL-terminated; long names use heap_name */
	char *heap_name;    /* owned by the event: freed by gp_hev_free_names */
};
#define GP_HEVF_HAS_COLOR 1
#define GP_HEVF_HAS_CATEGORY 2
#define GP_HEVF_HAS_PAYLOAD 4
#define GP_HEVF_PAYLOAD_DOUBLE 8
#define GP_HEVF_PAYLOAD_SIGNED 16
#define GP_HEVF_HAS_MEMINFO 32
#define GP_HEVF_HAS_STREAM 64
#define GP_HEVF_ASYNC 128 /* ALLOC/FREE: stream-ordered */

/* What an allocation API recorded by the callbacks allocates. */
enum gp_cb_kind { GP_CBK_DEVICE, GP_CBK_PINNED_HOST, GP_CBK_MANAGED, GP_CBK_COUNT };

int gp_hev_init(size_t max_events);
/* Copies name (n bytes, may be NULL) into ev and queues it. Never blocks for
 * long: a short mutex. Returns 0, or -ENOSPC when full (counted as dropped). */
int gp_hev_push(struct gp_host_ev *ev, const char *name, size_t n);
/* Writer: swaps out everything queued so far. *out stays owned by the queue
 * until the next call. */
size_t gp_hev_take(struct gp_host_ev **out);
const char *gp_hev_name(const struct gp_host_ev *ev, size_t *len);
uint32_t gp_gettid(void);
uint64_t gp_now(void); /* CUPTI clock, ns */

#endif
