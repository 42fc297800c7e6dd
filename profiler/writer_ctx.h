/* State owned by the writer thread, shared by its decoders
 * (cupti_decode.c, host_decode.c, torch_decode.c, writer_thread.c), and the
 * events more than one of them writes (writer_emit.c). Only the writer
 * thread touches it, so nothing here is locked. */
#ifndef GPUPROF_WRITER_CTX_H
#define GPUPROF_WRITER_CTX_H

#include "host_events.h"
#include "mem_counters.h"
#include "state.h"
#include "torch_counters.h"
#include "trace_format.h"
#include "trace_writer.h"
#include "u64_map.h"

#include <stdint.h>

/* The writer thread's maps are the project's u64 map (exporters/u64_map.h);
 * these two are built on it in small_maps.c. */

/* A set of 64-bit keys: a u64map whose values only say "present". */
struct gp_u64set {
	struct gp_u64map map;
};
/* 1 if key was added, 0 if present, -ENOMEM. */
int gp_u64set_add(struct gp_u64set *s, uint64_t key);
void gp_u64set_free(struct gp_u64set *s);

/* key -> owned string map, for names of open NVTX start/end ranges and of
 * demangled kernels: a u64map holding the strings' pointers. Bounded by the
 * caller (map.count). */
struct gp_strmap {
	struct gp_u64map map;
};
const char *gp_strmap_get(const struct gp_strmap *m, uint64_t key);
int gp_strmap_put(struct gp_strmap *m, uint64_t key, char *val); /* takes val, not NULL */
void gp_strmap_del(struct gp_strmap *m, uint64_t key);
void gp_strmap_free(struct gp_strmap *m);

#define GP_MAX_DEVICES 64
#define GP_MAX_CALLERS 256      /* distinct calling libraries named */
#define GP_MAX_CALLS_WAITING 65536 /* calls whose memory record has not come */

struct gp_device_info {
	int seen;
	char name[128];
	uint64_t total_memory;
	char uuid[48];
	uint32_t cc_major, cc_minor;
};

/* PyTorch's caching allocator as its hook reported it (torch_decode.c). */
struct gp_torch_alloc_state {
	struct gp_u64map blocks; /* live block address -> its bytes, in the pointer */
	uint64_t allocated[GP_MAX_DEVICES], reserved[GP_MAX_DEVICES];
	uint64_t events, guessed, unmatched_frees;
};

struct gp_writer_ctx {
	struct gp_trace_writer *tw;  /* owned */
	struct gp_mem_counters *mc;  /* owned */
	int64_t host_pid;
	uint64_t records;            /* CUPTI records decoded */
	uint64_t bad_records;        /* records with impossible fields, skipped */
	uint64_t skipped_memory_records; /* CUPTI's of what the callbacks record */
	struct gp_u64set streams;    /* (device << 32 | stream) named so far */
	struct gp_u64set threads;    /* host tids named so far */
	struct gp_strmap ranges;     /* open NVTX start/end ranges: id -> name */
	struct gp_strmap kernels;    /* CUPTI name pointer -> demangled name */
	/* live allocations recorded by the API callbacks: address -> bytes,
	 * with the enum gp_cb_kind + 1 in the top byte, so never NULL, held
	 * in the pointer (host_decode.c; a free says only its address, and
	 * cudaFree frees managed memory as well as device) */
	struct gp_u64map cb_live;
	struct gp_device_info dev[GP_MAX_DEVICES];
	uint64_t dev_counted;        /* bit per device: used, its GPU track named */
	struct gp_torch_counters torch; /* PyTorch's memory marks drawn as counters */
	struct gp_torch_alloc_state torch_alloc;
	/* the libraries that called allocation APIs (host_decode.c): their
	 * names, each kept once, and API call (corr) -> name, until CUPTI's
	 * memory record of that call takes it */
	char *caller_names[GP_MAX_CALLERS];
	unsigned ncallers;
	struct gp_u64map callers;
};

static inline int64_t gp_rel_ts(uint64_t ts)
{
	return (int64_t)(ts - gp_rec.ts_base);
}

/* An allocation or free as the trace writes it (TRACE_FORMAT.md, alloc/free). */
enum { GP_POOL_NONE, GP_POOL_LOCAL, GP_POOL_IMPORTED };
struct gp_memory_ev {
	uint64_t ts, addr, bytes, corr;
	uint32_t device, stream;     /* stream: CUPTI's id, or CUPTI_INVALID_STREAM_ID */
	const char *kind;            /* "device", "pinned_host", ... */
	uint8_t counter;             /* enum gp_mem_counter */
	uint8_t alloc, async, pool;  /* pool: GP_POOL_* */
	uint64_t pool_addr, pool_size, pool_used; /* size and used: local pools */
	/* Recorded by the API callbacks: the calling thread and the API's name
	 * (static), written as args "thread" and "api"; 0 and NULL for CUPTI's
	 * records, whose corr finds the API event that says them. */
	uint32_t thread;
	const char *api;
	/* the library that made the call (the object's file name), or NULL */
	const char *caller;
};
/* The caller name of ev (a GP_HEV_ALLOC or GP_HEV_CALLER), kept by the
 * writer as long as the trace: NULL when it has none (or too many names). */
const char *gp_caller_name(struct gp_writer_ctx *w, const struct gp_host_ev *ev);

/* The decoders (writer_thread.c calls them) */
void gp_decode_cupti_buffer(struct gp_writer_ctx *w, uint8_t *data, size_t valid);
void gp_decode_host_events(struct gp_writer_ctx *w, struct gp_host_ev *evs, size_t n);
/* GP_HEV_TORCH and GP_HEV_TORCH_STACK events (torch_decode.c) */
void gp_decode_torch(struct gp_writer_ctx *w, const struct gp_host_ev *ev);
void gp_decode_torch_stack(struct gp_writer_ctx *w, const struct gp_host_ev *ev);

/* ---- What several decoders write (writer_emit.c) ---- */
/* An alloc or free event and its counter update, from a CUPTI memory record
 * or from the API callbacks' host events. */
void gp_emit_memory(struct gp_writer_ctx *w, const struct gp_memory_ev *m);
/* A device's memory counters (mem_counters.h's emit callback; ctx: the
 * writer's struct gp_writer_ctx). */
void gp_emit_counter(void *ctx, uint32_t device, uint64_t ts, const uint64_t totals[GP_MC_COUNT]);
void gp_name_host_thread(struct gp_writer_ctx *w, uint32_t tid);
void gp_name_stream(struct gp_writer_ctx *w, uint32_t device, uint32_t stream);
void gp_note_device(struct gp_writer_ctx *w, uint32_t device);
/* The trace's tid of a CUPTI stream id: 0 for none. */
int64_t gp_stream_tid(uint32_t stream);

#endif
