/* Internal interfaces of the injected recorder (libgpuprof_inject.so); its
 * state and threads: state.h; its configuration: config.h. */
#ifndef GPUPROF_RECORDER_H
#define GPUPROF_RECORDER_H

#include "config.h"
#include "got_patch.h"
#include "state.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GP_EXPORT __attribute__((visibility("default")))

/* ---- CUPTI activity buffers (cupti_buffers.c) ---- */
struct gp_cupti_buf {
	uint8_t *data;      /* owned by the pool */
	size_t valid;       /* bytes of records */
	struct gp_cupti_buf *next;
};
int gp_bufs_init(size_t buf_size, size_t max_bytes);
/* Registers the CUPTI buffer callbacks. 0 or a CUptiResult (positive). */
int gp_bufs_register(void);
/* Tells CUPTI whether its buffers come zeroed (ours do); see cupti_buffers.c. */
void gp_bufs_zeroed(int ours);
/* Writer: takes every completed buffer (a list, oldest first). */
struct gp_cupti_buf *gp_bufs_take_completed(void);
void gp_bufs_release(struct gp_cupti_buf *b);
/* Writer waits up to ms for work; returns early when a buffer completes or
 * gp_bufs_wake() is called. */
void gp_bufs_wait(int ms);
void gp_bufs_wake(void);

/* ---- Host-side events: NVTX, OOM, allocations and frees (host_events.c) ---- */
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

/* ---- NVTX (nvtx_inject.c) ---- */
/* A domain handle given to the program points to one of these; domains and
 * registered strings are never freed (the program may use a handle after
 * destroying its domain), so the writer may read them at any time. */
struct gp_nvtx_domain {
	char *name; /* UTF-8, NUL-terminated */
};
/* Whether the calling thread is inside a module's forward range now. */
int gp_nvtx_in_module(void);

/* ---- API callbacks: failed allocations, allocations and frees (api_callbacks.c) ---- */
extern const char *const gp_memory_api_names[];
/* Turns the callbacks on or off as parts say: failed allocations with
 * GP_REC_OOM; allocations and frees with GP_REC_MEMORY but without
 * GP_REC_POOLS (see api_callbacks.c: without pool records CUPTI records
 * none). 0 or a CUptiResult. */
int gp_callbacks_enable(void *subscriber, unsigned parts);
/* Whether the callbacks record allocations and frees now (then CUPTI's own
 * records of what they record are skipped, should it write any). */
int gp_callbacks_tracking(void);
/* Whether a stream-ordered allocation or free that no wrapper records may
 * be under way (api_callbacks.c): one is, or none has come back and none
 * gone through a wrapper yet (the program's first call may still be making
 * its context); its callbacks must stay on until then. */
int gp_cb_async_running(void);
void gp_callbacks_handler(void *userdata, int domain, unsigned cbid, const void *cbdata);
/* ---- CUDA contexts' devices (context_devices.c) ---- */
/* A context was created (CUPTI's CUpti_ResourceData): its device noted. */
void gp_ctxdev_created(const void *resource_data);
/* The device of a CUPTI record's context id (0: the record names none): 1
 * and *device, or 0 if not known; a record naming no known context is on
 * the one device with contexts, where the process has one. */
int gp_ctxdev_device(uint32_t context_id, uint32_t *device);

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

/* ---- Stream-ordered allocations by patched calls (alloc_patch.c) ---- */
/* When the callbacks record allocations (gp_rec_by_callbacks): points the
 * loaded libraries' calls of cudaMallocAsync and cudaFreeAsync at recording
 * wrappers, unless GPUPROF_PATCH=0. Says nothing; keeps subscriber to turn
 * callbacks back on (gp_alloc_patch_tick). */
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

/* ---- Which API calls become activity records (api_select.c) ---- */
/* Turns API records on or off as parts (GP_REC_API, GP_REC_LAUNCHES) say,
 * leaving out stream-ordered allocations and frees while the callbacks
 * record them (GP_REC_MEMORY without GP_REC_POOLS); returns how many API
 * calls are recorded. */
int gp_api_select_apply(unsigned parts);
/* The trace name of a runtime/driver cbid; NULL if unknown. */
const char *gp_api_name(int driver, unsigned cbid);
int gp_api_is_launch(int driver, unsigned cbid);

/* ---- PyTorch's caching allocator (torch_alloc.c, torch_decode.c) ---- */
/* Exported for the hook (profiler/torch_alloc.h's gp_ta_event_fn and
 * gp_ta_stack_fn); declared here for the recorder's tests. */
struct gp_ta_event;
GP_EXPORT int gpuprof_torch_alloc_event(const struct gp_ta_event *ev);
GP_EXPORT int gpuprof_torch_stack(uint32_t id, const char *frames, size_t len);
GP_EXPORT int gpuprof_torch_in_module(void);

/* ---- Writer thread (writer_thread.c) ---- */
struct gp_trace_writer;
int gp_writer_start(struct gp_trace_writer *tw);
/* Flushes CUPTI, drains everything, writes the end event, closes the trace.
 * Waits at most timeout_ms for the writer, then abandons it. */
void gp_writer_stop(int clean, int timeout_ms);
/* In a signal handler, or on signals.c's finisher thread (a signal sent
 * from outside), as the program is about to die of sig: the writer
 * finishes the trace as gp_writer_stop does, its end saying the signal;
 * waits for it at most timeout_ms. 0, -ETIMEDOUT, or -EDEADLK on the
 * writer's own thread (or with no writer). Async-signal-safe. */
int gp_writer_finish_for_signal(int sig, int timeout_ms);
/* As the program ends without exit() (_exit, _Exit: exit_patch.h), on its
 * thread: the writer finishes the trace as gp_writer_stop does (a clean
 * end); waits for it at most timeout_ms. As above. */
int gp_writer_finish_for_exit(int timeout_ms);
/* Waits at most timeout_ms for a trace that another thread is having
 * finished (gp_writer_stop, the calls above): 0 or -ETIMEDOUT.
 * Async-signal-safe. */
int gp_writer_wait_finished(int timeout_ms);
/* For a signal the program handles, in its handler or on the finisher
 * thread: the writer makes one whole
 * flush now (CUPTI's completed buffers, host events, the file); waits for
 * it at most timeout_ms. As above. */
int gp_writer_flush_now(int timeout_ms);

#endif
